import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a file to send as a request body: only a regular file, opened without waiting.
///
/// A pipe, a device (`/dev/zero`) or a `/proc` file has no length to declare (`st_size` is 0):
/// read to its end it never ends (`/dev/zero`) or blocks (a FIFO with no writer, in `open`
/// itself without `O_NONBLOCK`). A "regular" file of size 0 that yields bytes (`/proc/cpuinfo`)
/// is refused too: its content would be sent as an empty body.
package enum RegularFile {
    /// Opens `path` for reading: its descriptor (the caller closes it) and its length.
    ///
    /// - Throws: ``TransportError`` with ``TransportError/Code/invalidRequest`` for anything but
    ///   a regular file, ``TransportError/Code/other`` when it cannot be opened.
    package static func opened(
        _ path: String, request url: URL?
    ) throws(TransportError) -> (descriptor: Int32, size: Int64) {
        // Non-blocking, so a FIFO with no writer cannot hold the thread in `open`; it is then
        // refused with any other file that is not regular.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw TransportError(.other, url: url, message: "Cannot open \(path): errno \(errno).")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw TransportError(.other, url: url, message: "Cannot stat \(path): errno \(code).")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw TransportError(
                .invalidRequest, url: url,
                message: "\(path) is not a regular file; only a regular file can be uploaded.")
        }
        // A file that says it is empty but is not (`/proc/cpuinfo`, other pseudo-files whose
        // `st_size` is 0): sent, it went out as an empty body, its content silently lost.
        if info.st_size == 0 {
            var byte: UInt8 = 0
            let count = pread(descriptor, &byte, 1, 0)
            if count != 0 {
                close(descriptor)
                throw TransportError(
                    .invalidRequest, url: url,
                    message: "\(path) reports a size of 0 but "
                        + (count > 0 ? "has content" : "cannot be read")
                        + " (a /proc or /sys file?); only a regular file with a length can be uploaded.")
            }
        }
        return (descriptor, Int64(info.st_size))
    }

    /// The length of the regular file at `path`, checked as ``opened(_:request:)`` checks it,
    /// for an upload handed to another reader (a session's upload task): nothing is read.
    package static func length(_ path: String, request url: URL?) throws(TransportError) -> Int64 {
        let (descriptor, size) = try opened(path, request: url)
        close(descriptor)
        return size
    }

    /// The whole of the regular file at `path`, at most `limit` bytes.
    ///
    /// - Throws: As ``opened(_:request:)``; ``TransportError/Code/invalidRequest`` for a file
    ///   larger than `limit` (nothing is read), or one that ends before its length.
    package static func contents(_ path: String, limit: Int, request url: URL?) throws(TransportError) -> Data {
        let (descriptor, size) = try opened(path, request: url)
        defer { close(descriptor) }
        guard size <= Int64(limit) else {
            throw TransportError(
                .invalidRequest, url: url,
                message: "\(path) has \(size) bytes, above the \(limit) an in-memory upload holds; "
                    + "use a transport that streams files (CurlTransport).")
        }
        var data = Data(count: Int(size))
        var filled = 0
        var failure: Int32 = 0
        data.withUnsafeMutableBytes { buffer in
            while filled < buffer.count, let base = buffer.baseAddress {
                let count = read(descriptor, base + filled, buffer.count - filled)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failure = errno }
                if count <= 0 { break }
                filled += count
            }
        }
        guard failure == 0, filled == data.count else {
            throw TransportError(
                .invalidRequest, url: url,
                message: failure != 0
                    ? "Reading \(path) failed: errno \(failure)."
                    : "\(path) ended after \(filled) of its \(size) bytes (it shrank while it was read).")
        }
        return data
    }
}
