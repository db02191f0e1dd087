import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes files so that readers see the old content or the new, never a mix: a temporary file
/// in the same directory, created with its final mode, flushed, then renamed over the target.
enum AtomicFile {
    struct Failure: Error, CustomStringConvertible {
        let operation: String
        let path: String
        let code: Int32
        var description: String {
            "\(operation) failed for \(path): \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// Replaces the file at `path` with `data`, created with `mode` (never wider, whatever the umask).
    static func write(_ data: Data, to path: String, mode: mode_t) throws(Failure) {
        let temporaryPath = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw Failure(operation: "create", path: temporaryPath, code: errno) }
        var failure: Failure?
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = systemWrite(descriptor, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Failure(operation: "write", path: temporaryPath, code: errno)
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 {
            failure = Failure(operation: "fsync", path: temporaryPath, code: errno)
        }
        close(descriptor)
        if failure == nil, rename(temporaryPath, path) != 0 {
            failure = Failure(operation: "rename", path: path, code: errno)
        }
        if let failure {
            unlink(temporaryPath)
            throw failure
        }
    }

    /// Creates `path` and any missing parents with `mode`; an existing directory is left as is.
    static func makeDirectory(_ path: String, mode: mode_t) throws(Failure) {
        var info = stat()
        if lstat(path, &info) == 0 { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path, lstat(parent, &info) != 0 {
            try makeDirectory(parent, mode: mode)
        }
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw Failure(operation: "mkdir", path: path, code: errno)
        }
    }
}

/// `write(2)`, named so it does not clash with Swift's `write` overloads on any platform.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
    #elseif canImport(Musl)
        Musl.write(descriptor, buffer, count)
    #else
        Darwin.write(descriptor, buffer, count)
    #endif
}
