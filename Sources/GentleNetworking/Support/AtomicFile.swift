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
package enum AtomicFile {
    package struct Failure: Error, CustomStringConvertible {
        let operation: String
        let path: String
        let code: Int32

        /// A failure of `operation` on `path` with `errno` `code`.
        package init(operation: String, path: String, code: Int32) {
            self.operation = operation
            self.path = path
            self.code = code
        }

        package var description: String {
            "\(operation) failed for \(path): \(String(cString: strerror(code))) (errno \(code))"
        }

        /// The failure as Foundation's file APIs report one, for public APIs that write a file
        /// the caller named: `.fileNoSuchFile` (no such directory), `.fileWriteNoPermission`,
        /// `.fileWriteOutOfSpace`, `.fileWriteVolumeReadOnly`, else `.fileWriteUnknown`, with
        /// `target` as the path and the `POSIXError` as the underlying error.
        package func cocoaError(target: String) -> CocoaError {
            let kind: CocoaError.Code
            switch code {
            case ENOENT, ENOTDIR: kind = .fileNoSuchFile
            case EACCES, EPERM: kind = .fileWriteNoPermission
            case ENOSPC, EDQUOT: kind = .fileWriteOutOfSpace
            case EROFS: kind = .fileWriteVolumeReadOnly
            default: kind = .fileWriteUnknown
            }
            var userInfo: [String: Any] = [NSFilePathErrorKey: target]
            if let posix = POSIXErrorCode(rawValue: code) { userInfo[NSUnderlyingErrorKey] = POSIXError(posix) }
            return CocoaError(kind, userInfo: userInfo)
        }
    }

    /// Writes a download held in memory to `destinationPath` as ``write(_:to:mode:)`` does
    /// (readable by its owner only), a failure reported as a `CocoaError` naming
    /// `destinationPath`: what every download path throws for a file it cannot write (a full
    /// disk is `.fileWriteOutOfSpace` whether the body came through memory or libcurl's file sink).
    package static func writeDownload(_ data: Data, to destinationPath: String) throws(CocoaError) {
        do {
            try write(data, to: destinationPath, mode: 0o600)
        } catch {
            throw error.cocoaError(target: destinationPath)
        }
    }

    /// Replaces the file at `path` with `data`, created with `mode` (never wider, whatever the umask).
    /// Readers see the old file or the new one; a symbolic link at `path` is replaced, not followed.
    package static func write(_ data: Data, to path: String, mode: mode_t) throws(Failure) {
        try write(to: path, mode: mode) { emit in _ = data.withUnsafeBytes(emit) }
    }

    /// The most bytes ``write(to:mode:parts:)`` gathers from small parts before writing them: 64 KiB.
    static let gatherBytes = 64 * 1024

    /// Replaces the file at `path` with the bytes `parts` hands, in order, to the function it is
    /// given, as ``write(_:to:mode:)`` does: for content made piece by piece (a HAR file's
    /// entries) without a copy of the whole in memory. Parts under 64 KiB are gathered into
    /// writes of up to that size; larger ones are written as they are. The function answers
    /// `false` once a write has failed, so a producer can stop reading its sources (a multipart
    /// body's files after the disk filled up). After a failed write the
    /// rest of the parts is ignored, the temporary file removed and the failure thrown; so is a
    /// failure `completing` returns once the parts are written (the producer's own, such as a
    /// source it could not read), and the file at `path` is then left as it was. With `synced`
    /// (the default) the file and its directory are flushed to disk before and after the rename;
    /// without it (content that need not survive a power loss, such as a request body spooled
    /// to disk) the rename alone keeps readers from seeing a mix.
    package static func write(
        to path: String, mode: mode_t, synced: Bool = true, parts: ((UnsafeRawBufferPointer) -> Bool) -> Void,
        completing producerFailure: () -> Failure? = { nil }
    ) throws(Failure) {
        let temporaryPath = temporaryPath(for: path)
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw Failure(operation: "create", path: temporaryPath, code: errno) }
        var failure: Failure?
        func writeAll(_ bytes: UnsafeRawBufferPointer) {
            guard failure == nil, let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, base + offset, bytes.count - offset)
                // A write that takes nothing and reports no error would loop for ever: EIO.
                if written <= 0 {
                    if written < 0, errno == EINTR { continue }
                    failure = Failure(operation: "write", path: temporaryPath, code: written < 0 ? errno : EIO)
                    return
                }
                offset += written
            }
        }
        var gathered: [UInt8] = []
        func flush() {
            guard !gathered.isEmpty else { return }
            gathered.withUnsafeBytes(writeAll)
            gathered.removeAll(keepingCapacity: true)
        }
        parts { part in
            guard failure == nil else { return false }
            if gathered.count &+ part.count > gatherBytes { flush() }
            if part.count >= gatherBytes {
                writeAll(part)
            } else {
                if gathered.capacity == 0 { gathered.reserveCapacity(gatherBytes) }
                gathered.append(contentsOf: part)
            }
            return failure == nil
        }
        flush()
        // The producer's own failure (a source it could not read) keeps the old file too.
        if failure == nil, let failed = producerFailure() { failure = failed }
        if failure == nil, synced, fsync(descriptor) != 0 {
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
        if synced { syncDirectory(of: path) }
    }

    /// Flushes the directory holding `path`, so a rename into it survives a power loss (the
    /// file's own `fsync` does not cover its directory entry: a saved credential could come back
    /// as the one before). Best effort: the file is in place whatever this returns.
    static func syncDirectory(of path: String) {
        let parent = (path as NSString).deletingLastPathComponent
        let descriptor = open(parent.isEmpty ? "." : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Moves the file at `source` to `path`, replacing what is there in one step, as
    /// ``write(_:to:mode:)`` does: a file, or a symbolic link itself (not its target); never a
    /// directory (`EISDIR`). Nothing at `path` is removed first, so a failed move leaves it as
    /// it was. Across file systems (`EXDEV`), the file is copied beside `path` as
    /// ``write(to:mode:parts:)`` writes (created 0600, exclusively, never through a link; synced),
    /// then renamed; `source` is left to its owner then. A copy that fails reports its own
    /// `errno` (a full disk is `ENOSPC`, not `EIO`).
    package static func move(_ source: String, replacing path: String) throws(Failure) {
        if rename(source, path) == 0 { return }
        let code = errno
        guard code == EXDEV else { throw Failure(operation: "rename", path: path, code: code) }
        let input = open(source, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw Failure(operation: "open", path: source, code: errno) }
        defer { close(input) }
        var readFailure: Failure?
        var buffer = [UInt8](repeating: 0, count: gatherBytes)
        try write(to: path, mode: 0o600) { emit in
            while true {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    if count < 0 { readFailure = Failure(operation: "read", path: source, code: errno) }
                    return
                }
                // A failed write ends the copy: nothing more is read from the source.
                guard buffer.withUnsafeBytes({ emit(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else { return }
            }
        } completing: {
            readFailure
        }
    }

    /// The longest name a temporary file gets: 255 bytes (`NAME_MAX` on Linux and on Apple
    /// platforms' file systems).
    static let maximumNameLength = 255

    /// Where ``write(_:to:mode:)`` writes before renaming: `<path>.tmp-<pid>-<namespace>-<number>`,
    /// in the target's directory (`namespace`: ``pidNamespace``). A target whose name leaves no
    /// room for that suffix within ``maximumNameLength`` (a 250-byte file name is valid, its
    /// temporary name would not be) gets `.gentle-partial.tmp-…` instead; the sweep of abandoned
    /// temporaries never matches those (its targets have short names).
    static func temporaryPath(for path: String) -> String {
        let tail = ".tmp-\(getpid())-\(pidNamespace)-\(UInt32.random(in: 0...UInt32.max))"
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let name = slash.map { path.utf8[path.utf8.index(after: $0)...] } ?? path.utf8[...]
        if name.count + tail.utf8.count <= maximumNameLength { return path + tail }
        let directory = slash.map { String(path[...$0]) } ?? ""
        return directory + ".gentle-partial" + tail
    }

    /// The inode of this process's PID namespace (`/proc/self/ns/pid`), written into temporary
    /// names so a sweep judges only its own namespace's process ids; 0 where there is none (Apple
    /// platforms).
    static let pidNamespace: UInt64 = {
        var info = stat()
        return stat("/proc/self/ns/pid", &info) == 0 ? UInt64(truncatingIfNeeded: info.st_ino) : 0
    }()

    /// How old a temporary file of another PID namespace must be before a sweep removes it: its
    /// process id means nothing here, and no write takes this long.
    static let foreignTemporaryAge: TimeInterval = 3600

    /// Removes the temporary files that writers died leaving behind (a crash or `kill -9` between
    /// creating the temporary file and renaming it): names
    /// `<prefix><suffix>.tmp-<pid>-<namespace>-<number>` in `directory` whose process no longer
    /// exists.
    ///
    /// Such a file holds a full copy of what was being written (credentials, a cached body), and
    /// nothing else ever removes it. A temporary file of a live process is left alone, since its
    /// writer is about to rename it. One written in another PID namespace (a container sharing
    /// the directory) names a process this one cannot see: it is removed only once it is an hour
    /// old (``foreignTemporaryAge``); judged by its process id, a live writer's file was removed
    /// under it. A name without a namespace (`.tmp-<pid>-<number>`) is judged by its process id.
    ///
    /// - Parameters:
    ///   - directory: The directory to sweep.
    ///   - suffix: The end of the target files' names, such as `credentials.json` or `.etag`.
    ///   - now: The current time, for the age of another namespace's files.
    static func removeAbandonedTemporaries(
        in directory: String, targetsEndingWith suffix: String, now: Date = Date()
    ) {
        guard let stream = opendir(directory) else { return }
        var abandoned: [String] = []
        while let entry = readdir(stream) {
            guard let name = directoryEntryName(entry) else { continue }
            guard let writer = writerProcess(ofTemporary: name, targetsEndingWith: suffix) else { continue }
            if let namespace = writer.namespace, namespace != pidNamespace {
                var info = stat()
                guard lstat(directory + "/" + name, &info) == 0 else { continue }
                #if canImport(Darwin)
                    let modified = TimeInterval(info.st_mtimespec.tv_sec)
                #else
                    let modified = TimeInterval(info.st_mtim.tv_sec)
                #endif
                if now.timeIntervalSince1970 - modified >= foreignTemporaryAge { abandoned.append(name) }
            } else if kill(writer.pid, 0) != 0 && errno == ESRCH {
                abandoned.append(name)
            }
        }
        closedir(stream)
        for name in abandoned {
            unlink(directory + "/" + name)
        }
    }

    /// The process id, and the PID namespace when the name has one, in a temporary file name
    /// that ``write(_:to:mode:)`` made for a target whose name ends with `suffix`; `nil` for any
    /// other name.
    static func writerProcess(
        ofTemporary name: String, targetsEndingWith suffix: String
    ) -> (pid: pid_t, namespace: UInt64?)? {
        guard let marker = name.range(of: ".tmp-", options: .backwards),
            name[..<marker.lowerBound].hasSuffix(suffix)
        else { return nil }
        let parts = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let pid = pid_t(parts[0]), pid > 0,
            let last = parts.last, UInt32(last) != nil
        else { return nil }
        if parts.count == 2 { return (pid, nil) }
        guard let namespace = UInt64(parts[1]) else { return nil }
        return (pid, namespace)
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
