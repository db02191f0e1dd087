// Subclasses of NetworkManager and URLBuilder restate `@unchecked Sendable`: both are Sendable
// (their state is behind locks), and Swift warns in both language modes when a subclass does not
// restate it. Code without it compiles, with that warning.
import Foundation
import YNetwork

/// A NetworkManager that remembers the last status it saw, as apps subclass it to read headers.
open class PeekingNetworkManager: NetworkManager, @unchecked Sendable {
    public private(set) var lastStatusCode: Int?

    open override func peekTaskResult(request: NetworkRequest, data: Data?, response: URLResponse?, error: Error?) {
        lastStatusCode = (response as? HTTPURLResponse)?.statusCode
    }
}

/// A manager wired to the stub, as the seed's tests wire one.
public func makeStubbedManager() -> PeekingNetworkManager {
    let manager = PeekingNetworkManager()
    manager.configure(
        with: NetworkManagerConfiguration(
            basePath: "https://api.example.com", networkEngine: URLProtocolStubNetworkEngine()))
    return manager
}

/// A URL builder that keeps `false` flags as `=false`.
public final class FlagKeepingURLBuilder: URLBuilder, @unchecked Sendable {
    public override func queryParameterString(field: String, value: Any, contentType: RequestContentType) -> String? {
        if let flag = value as? Bool, !flag {
            return "\(field)=false"
        }
        return super.queryParameterString(field: field, value: value, contentType: contentType)
    }
}

/// A GIF upload from the bundle.
public struct GifUploadRequest: MultipartRequest {
    public init() {}

    public var path: PathRepresentable { return "/gifs" }
    public var multipart: MultipartBuilder {
        return GifBuilder(fileName: "loading", formFields: ["caption": "spinner"], boundary: "gif-boundary")
    }
}

/// Form fields kept as the original's type, `[String: CustomStringConvertible]`.
public func labelledGif(fields: [String: CustomStringConvertible], note: CustomStringConvertible) -> MultipartBuilder {
    var parts = GifBuilder(fileName: "loading", formFields: fields).parts
    // Assigned through a subscript (an optional), the type is spelled out; a literal needs nothing.
    parts["note"] = MultipartElement.formField(value: note)
    let more: [String: MultipartElement] = ["again": .formField(value: note)]
    parts.merge(more) { first, _ in first }
    return MultipartForm(parts: parts, boundary: "gif-boundary")
}

/// The pretty-printed encoder the app logs bodies with.
public let loggingEncoder: JSONEncoder = .defaultEncoder

/// Query parameters of the app's own type.
public struct PagingParameters: ParametersBuilder {
    public let page: Int

    public init(page: Int) {
        self.page = page
    }

    public var parameters: Parameters { return ["page": page] }
}
