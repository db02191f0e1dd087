import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file of one transfer's own in the temporary directory: inside a directory made for it alone
/// (`mkdtemp`: a random name, mode 0700), so no other user can see its name or put anything where
/// it goes. Named directly in the shared temporary directory, a transfer's files could be
/// blocked by another user (who sees a download's partial file and creates a file or a directory
/// at its final name first: the rename then fails in a sticky directory), making every Y-Network
/// download or upload fail.
enum PrivateTemporaryFile {
    /// The prefix of the directories made here.
    static let directoryPrefix = "ynetwork-"

    /// A new directory for one transfer, and the URL of `name` in it (not created).
    ///
    /// - Throws: `CocoaError(.fileWriteUnknown)` naming the temporary directory when the
    ///   directory cannot be made (the error a file that cannot be written gives on every
    ///   download path).
    static func url(named name: String) throws -> URL {
        let temporary = FileManager.default.temporaryDirectory
        var template = Array(temporary.appendingPathComponent(directoryPrefix + "XXXXXX").path.utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return nil }
            return String(cString: base)
        }
        guard let directory else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        return URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(name, isDirectory: false)
    }

    /// Removes `file` and the directory ``url(named:)`` made for it; a file elsewhere is removed
    /// alone.
    static func remove(_ file: URL) {
        try? FileManager.default.removeItem(at: file)
        let directory = file.deletingLastPathComponent()
        if directory.lastPathComponent.hasPrefix(directoryPrefix) { rmdir(directory.path) }
    }
}
