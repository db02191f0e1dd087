import Foundation
import GentleNetworking

/// A multipart (`multipart/form-data`) body: named parts and the boundary between them.
///
/// Parts are written in name order. Bodies up to ``streamingThreshold`` are built in memory;
/// larger ones are written to a temporary file and sent from it, so a large file part never
/// sits in memory (give it with ``MultipartFileInfo/init(fileName:fileURL:mimeType:)``).
public protocol MultipartBuilder: BodyBuilder {
    /// The parts, by field name.
    var parts: [String: MultipartElement] { get }
    /// The boundary. A part whose bytes hold `--` and the boundary is refused
    /// (``MultipartError/boundaryInContent(part:)``): the server would read what follows as
    /// parts of its own.
    var boundary: String { get }
}

extension MultipartBuilder {
    /// The size above which a body is streamed from a temporary file: 10 MiB.
    public static var streamingThreshold: Int64 { 10 * 1024 * 1024 }

    /// The whole body in memory (the encoder is not used: parts carry their own bytes).
    ///
    /// - Throws: ``MultipartError/invalidBoundary(_:)`` for a boundary RFC 2046 does not allow;
    ///   ``MultipartError/unreadableFile(_:)`` when a file part cannot be read;
    ///   ``MultipartError/boundaryInContent(part:)`` when a part's bytes hold `--` and the
    ///   boundary (the server would read what follows as parts of its own).
    public func body(encoder: DataEncoder?) throws -> Data {
        try BoundaryScanner.validate(boundary)
        var data = Data()
        for name in parts.keys.sorted() {
            guard let part = parts[name] else { continue }
            let content = try part.content()
            guard !BoundaryScanner.contains(content, boundary: boundary) else {
                throw MultipartError.boundaryInContent(part: name)
            }
            data.append(Data("--\(boundary)\r\n".utf8))
            data.append(Data(part.head(name: name).utf8))
            data.append(content)
            data.append(Data("\r\n".utf8))
        }
        data.append(Data("--\(boundary)--\r\n".utf8))
        return data
    }

    /// The exact size of the body in bytes, without reading any file.
    ///
    /// - Throws: ``MultipartError/invalidBoundary(_:)`` for a boundary RFC 2046 does not allow;
    ///   ``MultipartError/unreadableFile(_:)`` when a file's size cannot be read (or it is not a
    ///   regular file), or when the sizes add up past `Int64.max` (a sparse file of exabytes: the
    ///   sum trapped).
    public func contentLength() throws -> Int64 {
        try BoundaryScanner.validate(boundary)
        var total = Int64("--\(boundary)--\r\n".utf8.count)
        for (name, part) in parts {
            let head = Int64("--\(boundary)\r\n".utf8.count + part.head(name: name).utf8.count + 2)
            let size: Int64
            do {
                size = try part.contentLength()
            } catch {
                if case .file(let info) = part, let url = info.fileURL { throw MultipartError.unreadableFile(url) }
                throw error
            }
            let (withHead, overflowHead) = total.addingReportingOverflow(head)
            let (sum, overflow) = withHead.addingReportingOverflow(size)
            guard !overflowHead, !overflow else {
                if case .file(let info) = part, let url = info.fileURL { throw MultipartError.unreadableFile(url) }
                throw MultipartError.cannotWrite(URL(fileURLWithPath: NSTemporaryDirectory()))
            }
            total = sum
        }
        return total
    }

    /// Writes the body to the file at `destination` (replacing it), copying file parts from
    /// disk in 256 KiB chunks, so memory stays constant whatever the size.
    ///
    /// The body is written to a new file beside `destination` (readable by its owner only from
    /// its creation: the body may hold personal data), which replaces `destination` in one
    /// rename once the whole body is written. Whatever fails (a part that cannot be read or that
    /// holds the boundary, a full disk), the file at `destination` is left as it was and the
    /// partial body removed. Only a regular file of this user's is replaced; a symbolic link,
    /// FIFO or directory at `destination` is not touched. The new file is not synced to disk
    /// (a request body, not a record to keep).
    ///
    /// - Throws: ``MultipartError`` when the boundary is not valid
    ///   (``MultipartError/invalidBoundary(_:)``), a file cannot be read or is not a regular file,
    ///   a part holds the boundary (``MultipartError/boundaryInContent(part:)``), or the
    ///   destination cannot be written; `CancellationError` when called from a task that is
    ///   cancelled while a file part is copied (checked every 256 KiB).
    public func writeBody(to destination: URL) throws {
        try BoundaryScanner.validate(boundary)
        guard let path = destination.localFilePath else { throw MultipartError.cannotWrite(destination) }
        // Only a regular file of this user's is replaced: anything else there (a FIFO, a
        // directory, a link, another user's file) is refused before anything is written.
        var existing = stat()
        if lstat(path, &existing) == 0,
            existing.st_mode & S_IFMT != S_IFREG || existing.st_uid != geteuid()
        {
            throw MultipartError.cannotWrite(destination)
        }
        var failure: (any Error)?
        do {
            try AtomicFile.write(to: path, mode: 0o600, synced: false) { emit in
                do {
                    try writeParts { data in
                        guard data.withUnsafeBytes(emit) else { throw MultipartWriteFailed() }
                    }
                } catch is MultipartWriteFailed {
                    // AtomicFile holds the write's own failure and throws it.
                } catch {
                    failure = error
                }
            } completing: {
                failure.map { _ in AtomicFile.Failure(operation: "write", path: path, code: EIO) }
            }
        } catch {
            throw failure ?? MultipartError.cannotWrite(destination)
        }
    }

    /// The body, handed to `write` piece by piece: file parts in chunks of up to 256 KiB, read
    /// as they are written (see ``writeBody(to:)``). An error `write` throws ends it at once.
    private func writeParts(_ write: (Data) throws -> Void) throws {
        for name in parts.keys.sorted() {
            guard let part = parts[name] else { continue }
            try write(Data("--\(boundary)\r\n".utf8))
            switch part {
            case .file(let info) where info.fileURL != nil:
                // Only a regular file (opened without waiting, a symbolic link followed), and no
                // more than its size when opened: `/dev/zero` filled the disk, a FIFO held the
                // thread in open(2), a file still growing grew the body with it.
                guard let url = info.fileURL, let path = url.localFilePath,
                    let (descriptor, size) = try? RegularFile.opened(path, request: nil)
                else { throw MultipartError.unreadableFile(info.fileURL ?? URL(fileURLWithPath: "/")) }
                let input = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                defer { try? input.close() }
                try write(Data(part.head(name: name).utf8))
                var scanner = BoundaryScanner(boundary: boundary)
                var left = size
                while left > 0 {
                    // A cancelled task (a transfer its caller cancelled) stops here, not after
                    // copying gigabytes to a body nobody will send.
                    if Task.isCancelled { throw CancellationError() }
                    let chunk: Data?
                    do { chunk = try input.read(upToCount: Int(min(left, 256 * 1024))) } catch {
                        throw MultipartError.unreadableFile(url)
                    }
                    guard let chunk, !chunk.isEmpty else { throw MultipartError.unreadableFile(url) }
                    guard !scanner.isFound(in: chunk) else { throw MultipartError.boundaryInContent(part: name) }
                    try write(chunk)
                    left -= Int64(chunk.count)
                }
                try write(Data("\r\n".utf8))
            default:
                let content = try part.content()
                guard !BoundaryScanner.contains(content, boundary: boundary) else {
                    throw MultipartError.boundaryInContent(part: name)
                }
                try write(Data(part.head(name: name).utf8) + content + Data("\r\n".utf8))
            }
        }
        try write(Data("--\(boundary)--\r\n".utf8))
    }
}

/// Thrown into `writeParts` by ``MultipartBuilder/writeBody(to:)`` once a write failed: no file
/// part is read further.
private struct MultipartWriteFailed: Error {}

/// A ready-made ``MultipartBuilder`` from a dictionary of parts.
public struct MultipartForm: MultipartBuilder {
    /// The parts, by field name.
    public let parts: [String: MultipartElement]
    /// The boundary.
    public let boundary: String

    /// Creates a form; the boundary is a fresh random one by default.
    public init(parts: [String: MultipartElement], boundary: String = "YNetwork-" + UUID().uuidString) {
        self.parts = parts
        self.boundary = boundary
    }
}

/// Why a multipart body could not be built.
public enum MultipartError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file part could not be read.
    case unreadableFile(URL)
    /// The temporary body file could not be written.
    case cannotWrite(URL)
    /// The part named `part` holds `--` and the boundary: sent, it would end early and the
    /// server would read what follows as parts of its own. Nothing is sent; use another
    /// boundary (the default one is random).
    case boundaryInContent(part: String)
    /// The boundary is not one RFC 2046 allows: 1 to 70 of `A-Z a-z 0-9 '()+_,-./:=?` and
    /// space, not ending in a space. `b; x` would be read by servers as the boundary `b`, which
    /// the check for the boundary in a part's bytes does not look for. (An allowed boundary that
    /// is not an HTTP token, such as `a b`, is sent quoted.)
    case invalidBoundary(String)

    /// A sentence naming the file or the part.
    public var description: String {
        switch self {
        case .unreadableFile(let url): "Cannot read the multipart file \(url.path)."
        case .cannotWrite(let url): "Cannot write the multipart body to \(url.path)."
        case .invalidBoundary(let boundary):
            "The multipart boundary \"\(PrintableText.escaping(boundary))\" is not valid: 1 to 70 letters, digits "
                + "or '()+_,-./:=? and spaces, not ending in a space."
        case .boundaryInContent(let part):
            "The multipart part \"\(PrintableText.escaping(part))\" contains its boundary; choose another boundary."
        }
    }
}
