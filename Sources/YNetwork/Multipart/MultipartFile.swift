import Foundation

/// A file in a multipart body: its name, its MIME type, and its bytes, in memory or on disk.
public protocol MultipartFile: Sendable {
    /// The file name sent in `Content-Disposition`.
    var fileName: String { get }
    /// The bytes, when in memory; `nil` when they are read from ``fileURL``.
    var data: Data? { get }
    /// The MIME type, such as `image/png`.
    var mimeType: String { get }
    /// A file on disk to stream the bytes from instead of ``data``; `nil` by default. Large
    /// files should be given this way: they are never loaded into memory. Only a `file:` URL is
    /// read: any other makes the body fail with ``MultipartError/unreadableFile(_:)``.
    var fileURL: URL? { get }
}

extension MultipartFile {
    /// `nil`: the bytes come from ``data``.
    public var fileURL: URL? { nil }
}

/// A ``MultipartFile`` from bytes in memory or from a file on disk.
public struct MultipartFileInfo: MultipartFile {
    /// The file name sent in `Content-Disposition`.
    public let fileName: String
    /// The bytes in memory, or `nil` for a file on disk.
    public let data: Data?
    /// The MIME type.
    public let mimeType: String
    /// The file on disk, or `nil` for bytes in memory.
    public let fileURL: URL?

    /// A file whose bytes are in memory (`nil` data sends an empty file).
    public init(fileName: String, data: Data?, mimeType: String) {
        self.fileName = fileName
        self.data = data
        self.mimeType = mimeType
        self.fileURL = nil
    }

    /// A file streamed from disk as the body is written, never loaded whole into memory.
    /// `fileURL` must be a `file:` URL (any other fails the body with
    /// ``MultipartError/unreadableFile(_:)``: its path is not read as a local one).
    public init(fileName: String, fileURL: URL, mimeType: String) {
        self.fileName = fileName
        self.data = nil
        self.mimeType = mimeType
        self.fileURL = fileURL
    }
}
