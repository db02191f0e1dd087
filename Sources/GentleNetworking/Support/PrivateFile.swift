import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading files that only this user may have written, in a directory only this user may change:
/// what a cache on disk needs before it serves what it finds there.
enum PrivateFile {
    /// What a directory is, for a store that keeps files in it.
    enum DirectoryState: Equatable {
        /// Nothing is there yet.
        case missing
        /// A directory (not a symlink) owned by this user, which no other user may write to.
        case trusted
        /// Something else; the reason, naming the path.
        case untrusted(String)
    }

    /// The state of the directory at `path` (its last component is not followed if a symlink).
    /// With `tightening`, a directory of this user's that others may write to is made
    /// unwritable by them (`chmod g-w,o-w`, other bits kept) and is then trusted: a file another user put there
    /// before is still refused by ``contents(of:maxBytes:)``, being theirs.
    static func directoryState(_ path: String, tightening: Bool = false) -> DirectoryState {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return errno == ENOENT ? .missing : .untrusted("\(path) cannot be examined (errno \(errno)).")
        }
        if info.st_mode & S_IFMT == S_IFLNK { return .untrusted("\(path) is a symbolic link.") }
        guard info.st_mode & S_IFMT == S_IFDIR else { return .untrusted("\(path) is not a directory.") }
        guard info.st_uid == geteuid() else { return .untrusted("\(path) is owned by another user.") }
        if info.st_mode & 0o022 != 0, tightening, chmod(path, info.st_mode & 0o7777 & ~0o022) == 0 {
            return .trusted
        }
        guard info.st_mode & 0o022 == 0 else {
            return .untrusted(
                "\(path) can be written by other users (mode 0\(String(info.st_mode & 0o777, radix: 8))).")
        }
        return .trusted
    }

    /// What reading a file found.
    enum Contents: Equatable {
        /// No such file.
        case missing
        /// Not a file this user wrote: a symlink, not a regular file, owned by another user,
        /// writable by others, or larger than allowed.
        case refused
        /// It could not be read now (too many open files, an I/O error): perhaps later.
        case unreadable
        /// The file's bytes.
        case data(Data)
    }

    /// The contents of the regular file at `path`, read only if it is owned by this user, not
    /// writable by others and at most `maxBytes` long. A symlink is not followed, and a FIFO or
    /// device never blocks the caller (the file is opened non-blocking and refused).
    static func contents(of path: String, maxBytes: Int) -> Contents {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return .missing
            case ELOOP, EACCES, ENXIO, ENOTDIR, EISDIR: return .refused  // a symlink, or not a file of ours
            default: return .unreadable
            }
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .unreadable }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
            info.st_mode & 0o022 == 0, info.st_size >= 0, info.st_size <= Int64(max(0, maxBytes))
        else { return .refused }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = bytes.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return systemRead(descriptor, base + filled, size - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return .unreadable
            }
            if count == 0 { break }
            filled += count
        }
        // A file that shrank while it was read is what it is now: a short read.
        return .data(Data(bytes[0..<filled]))
    }
}
