import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A per-user credentials file: the store behind ``SystemKeyChainAuthService`` on Linux, and
/// usable on any platform.
///
/// - The file is `credentials.json` in a `gentle-networking` directory under
///   `$XDG_CONFIG_HOME`, or under `~/.config` when that variable is unset or not absolute.
/// - The directory is created with mode 0700 and the file with mode 0600.
/// - A file or directory that other users can read or write is refused with
///   ``CredentialStoreError/Code/insecurePermissions``, as ssh does with private keys.
/// - Writes are atomic: a temporary file in the same directory, flushed, then renamed over.
///   Each save or delete first removes the temporary files of writers that died before their
///   rename (a crash, `kill -9`), so no copy of a deleted credential stays behind.
/// - A file that cannot be parsed, or is larger than 1 MiB, is
///   ``CredentialStoreError/Code/corruptFile`` and is never overwritten: saving into it fails
///   too, so nothing is silently lost. Anything but a regular file at its path (a FIFO, a
///   device) is ``CredentialStoreError/Code/insecurePermissions``, without waiting on it.
/// - The parsed file is kept in memory. Each read checks, with two `lstat` calls, that the
///   directory and file are still private and that the file is the same one (device, inode,
///   size, modification time, mode); only then is the cached value used. A save or delete
///   through this store (or a copy of it) drops the cache; a file that another process or
///   another store replaced is read again at the next call, since every write renames a new file
///   into place. An in-place edit that keeps the size, mode and modification time (possible on a
///   file system with a coarse clock) can go unseen until the next save or delete.
public struct FileCredentialStore: Sendable {
    /// The directory holding the credentials file; `nil` when no config directory exists.
    public let directory: URL?

    /// The credentials file.
    public var fileURL: URL? { directory?.appendingPathComponent("credentials.json") }

    /// Serializes reads and writes from this process; saves from other processes are serialized
    /// by `flock` on the directory's `.credentials.lock`, and readers see whole files (rename).
    private static let lock = NSLock()

    /// The largest credentials file read: a few tokens take a few KiB.
    static let maxFileBytes = 1 << 20

    /// The entries last read or written, with the identity of the file they came from.
    private let cache = Locked(CredentialFileCache())

    /// Creates a store in `directory`; `nil` makes every call fail with
    /// ``CredentialStoreError/Code/noConfigDirectory``.
    public init(directory: URL?) {
        self.directory = directory
    }

    /// How many times this store (and its copies) read and decoded the file: for tests.
    var fileReadCount: Int { cache.current.reads }

    /// Creates the store at the standard per-user location.
    public init() {
        self.directory = Self.defaultDirectory()
    }

    /// `$XDG_CONFIG_HOME/gentle-networking`, or `~/.config/gentle-networking`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("gentle-networking")
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".config")
            .appendingPathComponent("gentle-networking")
    }

    /// The value stored under `key`, or `nil`.
    ///
    /// Served from memory while the file is unchanged (see the type's discussion); the
    /// permission checks run on every call.
    public func value(for key: String) throws(CredentialStoreError) -> String? {
        if let entries = try cachedEntries() { return entries[key] }
        Self.lock.lock()
        defer { Self.lock.unlock() }
        return try readEntries()[key]
    }

    /// Stores `value` under `key`, or removes the key when `value` is `nil`.
    ///
    /// A save that would make the file larger than it may be (1 MiB, JSON-encoded) throws
    /// ``CredentialStoreError/Code/ioFailure`` and changes nothing.
    ///
    /// The read, change and write hold an exclusive `flock` on `.credentials.lock` in the
    /// directory, so two processes saving different keys at once both keep theirs (every program
    /// using the default location shares one file).
    public func setValue(_ value: String?, for key: String) throws(CredentialStoreError) {
        Self.lock.lock()
        defer { Self.lock.unlock() }
        // Read once first: a file or directory that is not private is refused before the lock
        // file is created next to it, and a save that changes nothing touches nothing.
        if try readEntries()[key] == value { return }
        let processLock = try lockAcrossProcesses()
        defer { if processLock >= 0 { close(processLock) } }
        var entries = try readEntries()
        if entries[key] == value { return }
        entries[key] = value
        cache.withLock { $0.entries = nil }
        try writeEntries(entries)
    }

    // MARK: File format

    private struct FileContents: Codable {
        var version: Int
        var entries: [String: String]
    }

    private func paths() throws(CredentialStoreError) -> (directory: String, file: String) {
        guard let directory else {
            throw CredentialStoreError(
                .noConfigDirectory, message: "Neither XDG_CONFIG_HOME nor HOME is set to an absolute path.")
        }
        return (directory.path, directory.appendingPathComponent("credentials.json").path)
    }

    /// The cached entries when the file is still the one they were read from and is still
    /// private; `nil` when the file must be read (which also reports any error).
    private func cachedEntries() throws(CredentialStoreError) -> [String: String]? {
        guard let cached = cache.current.entries else { return nil }
        let (directoryPath, filePath) = try paths()
        var info = stat()
        guard lstat(directoryPath, &info) == 0 else { return nil }
        try Self.checkDirectory(info, path: directoryPath)
        guard lstat(filePath, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 == 0,
            CredentialFileIdentity(info) == cached.identity
        else { return nil }
        return cached.entries
    }

    private func readEntries() throws(CredentialStoreError) -> [String: String] {
        let (directoryPath, filePath) = try paths()
        var info = stat()
        if lstat(directoryPath, &info) != 0 {
            if errno == ENOENT { return [:] }
            throw Self.ioError("stat", path: directoryPath)
        }
        try Self.checkDirectory(info, path: directoryPath)
        // O_NONBLOCK: opening a FIFO put where the file belongs returns at once instead of
        // waiting for a writer (it is refused below); it changes nothing for a regular file.
        let descriptor = open(filePath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return [:] }
            throw Self.ioError("open", path: filePath)
        }
        defer { close(descriptor) }
        if fstat(descriptor, &info) != 0 { throw Self.ioError("stat", path: filePath) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CredentialStoreError(
                .insecurePermissions, path: filePath, message: "The credentials path is not a regular file.")
        }
        // As for the directory: a file this user did not write (put there by someone who could)
        // is not read as this user's credentials.
        guard info.st_uid == geteuid() else {
            throw CredentialStoreError(
                .insecurePermissions, path: filePath, message: "The credentials file is owned by another user.")
        }
        if info.st_mode & 0o077 != 0 {
            throw CredentialStoreError(
                .insecurePermissions, path: filePath,
                message: "The credentials file is accessible by other users (mode \(Self.octal(info.st_mode))); "
                    + "run chmod 600 on it.")
        }
        // After the permission check: a file others can read is reported as that first.
        guard info.st_size <= Int64(Self.maxFileBytes) else { throw Self.tooLarge(filePath) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.ioError("read", path: filePath)
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            // A file that grew while it was read is no more trusted than a large one.
            if data.count > Self.maxFileBytes { throw Self.tooLarge(filePath) }
        }
        do {
            let contents = try JSONDecoder().decode(FileContents.self, from: data)
            guard contents.version == 1 else {
                throw CredentialStoreError(
                    .corruptFile, path: filePath, message: "Unsupported credentials file version \(contents.version).")
            }
            let identity = CredentialFileIdentity(info)
            cache.withLock {
                $0.reads += 1
                $0.entries = (identity, contents.entries)
            }
            return contents.entries
        } catch let error as CredentialStoreError {
            throw error
        } catch {
            throw CredentialStoreError(
                .corruptFile, path: filePath,
                message: "The credentials file cannot be parsed; it was left untouched. Move it away to start over.")
        }
    }

    /// How long a save waits for another process's save to end.
    static let lockWait: TimeInterval = 10

    /// Opens (creating it, `0600`, never through a symbolic link) the directory's lock file and
    /// takes an exclusive `flock` on it; closing the descriptor releases it. Waits at most
    /// ``lockWait`` for another process (one stopped in a debugger must not hold this process's
    /// saves for good): then ``CredentialStoreError/Code/ioFailure``. Where the file system has
    /// no `flock` (`ENOLCK`, `EOPNOTSUPP`), returns -1 and the save goes on unlocked, as before.
    private func lockAcrossProcesses() throws(CredentialStoreError) -> Int32 {
        let (directoryPath, _) = try paths()
        try Self.makeDirectory(directoryPath)
        let lockPath = directoryPath + "/.credentials.lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else { throw Self.ioError("open", path: lockPath) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw CredentialStoreError(
                .insecurePermissions, path: lockPath, message: "The lock file is not a regular file.")
        }
        let deadline = Date().addingTimeInterval(Self.lockWait)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == ENOLCK || code == EOPNOTSUPP {
                close(descriptor)
                return -1
            }
            guard code == EWOULDBLOCK || code == EINTR, Date() < deadline else {
                close(descriptor)
                throw CredentialStoreError(
                    .ioFailure, path: lockPath,
                    message: code == EWOULDBLOCK
                        ? "Another process held the credentials lock for \(Int(Self.lockWait)) s."
                        : "flock failed: \(String(cString: strerror(code))) (errno \(code)).")
            }
            usleep(5_000)
        }
        return descriptor
    }

    private func writeEntries(_ entries: [String: String]) throws(CredentialStoreError) {
        let (directoryPath, filePath) = try paths()
        try Self.makeDirectory(directoryPath)
        AtomicFile.removeAbandonedTemporaries(in: directoryPath, targetsEndingWith: "credentials.json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data: Data
        do {
            data = try encoder.encode(FileContents(version: 1, entries: entries))
        } catch {
            throw CredentialStoreError(.ioFailure, path: filePath, message: "Could not encode credentials.")
        }
        // Never a file this store would refuse to read: every later read, save and delete, of
        // every key and every program sharing the file, failed with `.corruptFile` (a refresh
        // endpoint handing out a 1 MiB token was enough). The old file stays as it was.
        guard data.count <= Self.maxFileBytes else {
            throw CredentialStoreError(
                .ioFailure, path: filePath,
                message: "The credentials would take \(data.count) bytes, above the \(Self.maxFileBytes) a credentials "
                    + "file may hold; nothing was saved.")
        }
        do {
            try AtomicFile.write(data, to: filePath, mode: 0o600)
        } catch {
            throw CredentialStoreError(.ioFailure, path: filePath, message: error.description)
        }
    }

    // MARK: Permissions

    private static func makeDirectory(_ path: String) throws(CredentialStoreError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            try checkDirectory(info, path: path)
            return
        }
        do {
            try AtomicFile.makeDirectory(path, mode: 0o700)
        } catch {
            throw CredentialStoreError(.ioFailure, path: path, message: error.description)
        }
    }

    private static func checkDirectory(_ info: stat, path: String) throws(CredentialStoreError) {
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CredentialStoreError(
                .insecurePermissions, path: path, message: "The credentials path is not a directory.")
        }
        guard info.st_uid == geteuid() else {
            throw CredentialStoreError(
                .insecurePermissions, path: path, message: "The credentials directory is owned by another user.")
        }
        if info.st_mode & 0o077 != 0 {
            throw CredentialStoreError(
                .insecurePermissions, path: path,
                message: "The credentials directory is accessible by other users (mode \(octal(info.st_mode))); "
                    + "run chmod 700 on it.")
        }
    }

    /// The error for a credentials file over ``maxFileBytes``.
    private static func tooLarge(_ path: String) -> CredentialStoreError {
        CredentialStoreError(
            .corruptFile, path: path,
            message: "The credentials file is larger than \(maxFileBytes) bytes; it was left untouched.")
    }

    private static func octal(_ mode: mode_t) -> String {
        "0" + String(mode & 0o777, radix: 8)
    }

    private static func ioError(_ operation: String, path: String) -> CredentialStoreError {
        let code = errno
        let reason = String(cString: strerror(code))
        return CredentialStoreError(.ioFailure, path: path, message: "\(operation) failed: \(reason) (errno \(code)).")
    }
}

/// The parsed credentials file a ``FileCredentialStore`` keeps in memory.
struct CredentialFileCache {
    /// The entries and the identity of the file they were read from; `nil` until read, and after
    /// a save or delete.
    var entries: (identity: CredentialFileIdentity, entries: [String: String])?
    /// How many times the file was read and decoded.
    var reads = 0
}

/// What tells one version of the credentials file from another without reading it.
struct CredentialFileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let mode: UInt32
    let modifiedSeconds: Int64
    let modifiedNanoseconds: Int64

    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int64(truncatingIfNeeded: info.st_size)
        mode = UInt32(truncatingIfNeeded: info.st_mode)
        #if canImport(Darwin)
            modifiedSeconds = Int64(truncatingIfNeeded: info.st_mtimespec.tv_sec)
            modifiedNanoseconds = Int64(truncatingIfNeeded: info.st_mtimespec.tv_nsec)
        #else
            modifiedSeconds = Int64(truncatingIfNeeded: info.st_mtim.tv_sec)
            modifiedNanoseconds = Int64(truncatingIfNeeded: info.st_mtim.tv_nsec)
        #endif
    }
}
