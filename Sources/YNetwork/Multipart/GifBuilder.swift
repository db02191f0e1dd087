import Foundation

/// A multipart body with one GIF from a bundle, under the field name `file`, and form fields.
///
/// Needs only Foundation, so it works on Linux too. The file part's `filename` is ``fileName``
/// as given, its type `image/gif`, and its bytes those of the bundle's `fileName.gif` resource.
public struct GifBuilder: MultipartBuilder, MultipartFile {
    /// The resource name of the GIF in ``bundle``, without the `.gif` extension; also the file
    /// name sent.
    public let fileName: String
    /// Extra form fields, by name; as in Y-Network, a field named `file`
    /// replaces the GIF.
    public let formFields: [String: any CustomStringConvertible & Sendable]
    /// The multipart boundary.
    public let boundary: String
    /// The bundle that holds the GIF.
    public let bundle: Bundle

    /// Creates a builder.
    ///
    /// - Parameters:
    ///   - fileName: The GIF's resource name, without `.gif`.
    ///   - formFields: Extra form fields.
    ///   - boundary: A fresh UUID string by default.
    ///   - bundle: `.main` by default.
    public init(
        fileName: String, formFields: [String: any CustomStringConvertible & Sendable],
        boundary: String = UUID().uuidString, bundle: Bundle = .main
    ) {
        self.fileName = fileName
        self.formFields = formFields
        self.boundary = boundary
        self.bundle = bundle
    }

    /// Creates a builder from form fields typed as Y-Network's (`[String: CustomStringConvertible]`,
    /// values that need not be `Sendable`): each value's text is taken now, so the builder stays
    /// `Sendable`. A literal or a `Sendable` dictionary goes to the initializer above instead;
    /// both send the same text.
    @_disfavoredOverload
    public init(
        fileName: String, formFields: [String: any CustomStringConvertible], boundary: String = UUID().uuidString,
        bundle: Bundle = .main
    ) {
        self.init(
            fileName: fileName, formFields: formFields.mapValues { ValueText.of($0) }, boundary: boundary,
            bundle: bundle)
    }

    /// The GIF as the `file` part, and each form field.
    public var parts: [String: MultipartElement] {
        var parts: [String: MultipartElement] = ["file": .file(info: self)]
        for (name, value) in formFields { parts[name] = .formField(value: value) }
        return parts
    }

    /// `image/gif`.
    public var mimeType: String { ImageContentType.gif.value }

    /// The bytes of the bundle's `fileName.gif`, or `nil` when there is no such resource or it
    /// cannot be read (the part is then sent empty).
    public var data: Data? {
        guard let url = bundle.url(forResource: fileName, withExtension: "gif") else { return nil }
        return try? Data(contentsOf: url)
    }
}
