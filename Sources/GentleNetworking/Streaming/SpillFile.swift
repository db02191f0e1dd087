import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The bytes a stream's consumer has not read yet, on disk, for a producer that cannot pause
/// (URLSession on Linux): a ``ChunkBuffer`` writes what arrives past its memory limit here and
/// reads it back in order, so memory stays constant however far the consumer falls behind.
///
/// The file is made owner-only (`mkstemp`) and close-on-exec, and unlinked at once: it has no name, nothing else
/// can open it, and it disappears when closed, even if the process dies. It holds at most
/// `limit` unread bytes, written round a ring of `limit` bytes, so the file never grows past
/// `limit` however much goes through (appending, it grew by everything that went through while
/// the consumer stayed behind); once the consumer has read everything it is truncated to zero.
///
/// Not thread-safe: the owning buffer calls it only under its own lock.
final class SpillFile {
    /// The most unread bytes the file holds.
    let limit: Int64
    private let descriptor: Int32
    /// Bytes read and written since the file was last emptied; their place in the file is the
    /// offset modulo ``limit``.
    private var readOffset: Int64 = 0
    private var writeOffset: Int64 = 0

    /// Bytes written and not yet read.
    var pending: Int64 { writeOffset - readOffset }

    /// Whether the descriptor is closed in a child process that runs another program (for tests).
    var isCloseOnExec: Bool { fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0 }

    /// The size of the file on disk (for tests): at most ``limit``.
    var sizeOnDisk: Int64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : -1
    }

    /// Makes the file in `directory` (the temporary directory by default).
    ///
    /// - Throws: ``TransportError/Code/other`` when the file cannot be made.
    init(limit: Int64, directory: URL = FileManager.default.temporaryDirectory) throws {
        self.limit = max(0, limit)
        var template = Array(directory.appendingPathComponent("gentle-stream-XXXXXX").path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { mkstemp($0) } ?? -1
        }
        // Close-on-exec at once: a child process started later would otherwise keep the unlinked
        // file, and up to `limit` of the response, for as long as it lives. (`mkostemp`, which
        // sets it atomically, is not visible to Swift through Glibc; a `fork` on another thread
        // between these two calls is the only window.)
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else {
            throw TransportError(
                .other, url: nil, message: "Could not make a file for a stream's unread bytes (errno \(errno)).")
        }
        template.withUnsafeBufferPointer { buffer in
            if let path = buffer.baseAddress { _ = unlink(path) }
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Appends `data`; `false` when the file would then hold more than ``limit`` unread bytes
    /// (nothing is written).
    ///
    /// - Throws: ``TransportError/Code/other`` when the disk refuses the bytes.
    func write(_ data: Data) throws -> Bool {
        guard Int64(data.count) <= limit - pending else { return false }
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var done = 0
            while done < bytes.count {
                guard let base = bytes.baseAddress else { return }
                // Up to the end of the ring, then from its start.
                let position = (writeOffset + Int64(done)) % limit
                let count = Int(min(Int64(bytes.count - done), limit - position))
                let written = pwrite(descriptor, base + done, count, off_t(position))
                // A write that takes nothing and reports no error would loop for ever: EIO.
                if written <= 0 {
                    let code = written < 0 ? errno : EIO
                    if code == EINTR { continue }
                    throw TransportError(
                        .other, url: nil, message: "Could not write a stream's unread bytes to disk (errno \(code)).")
                }
                done += written
            }
        }
        writeOffset += Int64(data.count)
        return true
    }

    /// Up to `count` of the oldest unread bytes, or `nil` when there are none. When the last
    /// byte is read the file is emptied.
    ///
    /// - Throws: ``TransportError/Code/other`` when the bytes cannot be read back.
    func read(upTo count: Int) throws -> Data? {
        let wanted = Int(min(Int64(max(1, count)), pending))
        guard wanted > 0 else { return nil }
        var data = Data(count: wanted)
        let got = try data.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) -> Int in
            guard let base = bytes.baseAddress else { return 0 }
            var got = 0
            while got < wanted {
                // Up to the end of the ring, then from its start.
                let position = (readOffset + Int64(got)) % limit
                let count = Int(min(Int64(wanted - got), limit - position))
                let read = pread(descriptor, base + got, count, off_t(position))
                if read < 0, errno == EINTR { continue }
                guard read > 0 else {
                    if got > 0 { break }
                    throw TransportError(
                        .other, url: nil,
                        message: "Could not read a stream's unread bytes back from disk (errno \(errno)).")
                }
                got += read
            }
            return got
        }
        if got < wanted { data.removeSubrange(got...) }
        readOffset += Int64(got)
        if readOffset == writeOffset {
            readOffset = 0
            writeOffset = 0
            _ = ftruncate(descriptor, 0)
        }
        return data
    }
}
