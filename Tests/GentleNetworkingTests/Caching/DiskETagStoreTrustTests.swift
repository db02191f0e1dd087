import Foundation
import Testing

@testable import GentleNetworking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `DiskETagStore` serves only what this user wrote: an entry planted by another local user (in a
/// directory others may write to, or through a symlink) is never served.
@Suite("DiskETagStore trusts only a private directory and its own files")
struct DiskETagStoreTrustTests {
    let key = "GET https://h/x"

    /// A store with one valid entry for ``key``, in a fresh directory; the directory and the
    /// entry's path.
    func storeWithEntry() async throws -> (DiskETagStore, URL, String) {
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        let store = DiskETagStore(directory: directory)
        await store.store(entry("cached"), for: key)
        let path = directory.appendingPathComponent(DiskETagStore.fileName(for: key)).path
        #expect(await store.cachedResponse(for: key)?.body == Data("cached".utf8))
        return (store, directory, path)
    }

    @Test("Another user's directory is not used (nothing read, written or removed); once fixed, it is again")
    func foreignDirectory() async throws {
        let (store, directory, path) = try await storeWithEntry()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        // chown needs root, which CI and this suite's machines run as.
        #expect(chown(directory.path, 65534, 65534) == 0, "chown needs root (errno \(errno))")

        #expect(await store.cachedResponse(for: key) == nil)
        #expect(await store.directoryProblem?.contains("owned by another user") == true)
        await store.store(entry("new"), for: "GET https://h/y")
        await store.remove(for: key)
        await store.removeAll()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == [DiskETagStore.fileName(for: key)], "nothing written or removed: \(names)")
        #expect(await DiskETagStore(directory: directory).cachedResponse(for: key) == nil)
        #expect(FileManager.default.fileExists(atPath: path))

        #expect(chown(directory.path, geteuid(), getegid()) == 0)
        #expect(await store.cachedResponse(for: key)?.body == Data("cached".utf8))
        #expect(await store.directoryProblem == nil)
    }

    @Test("A directory of this user's that others may write to (umask 002, 0777) is tightened, then used")
    func writableDirectoryTightened() async throws {
        let (_, directory, _) = try await storeWithEntry()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        #expect(chmod(directory.path, 0o777) == 0)

        let reopened = DiskETagStore(directory: directory)
        #expect(await reopened.cachedResponse(for: key)?.body == Data("cached".utf8))
        #expect(await reopened.directoryProblem == nil)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o755)
    }

    @Test("A directory that is a symlink is not used, even to a private directory")
    func symlinkedDirectory() async throws {
        let (_, directory, _) = try await storeWithEntry()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let link = directory.deletingLastPathComponent().appendingPathComponent("link")
        #expect(symlink(directory.path, link.path) == 0)

        let viaLink = DiskETagStore(directory: link)
        #expect(await viaLink.cachedResponse(for: key) == nil)
        #expect(await viaLink.directoryProblem?.contains("symbolic link") == true)
    }

    @Test("An entry that is a symlink is a miss, and only the link is removed")
    func symlinkedEntry() async throws {
        let (store, directory, path) = try await storeWithEntry()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let elsewhere = directory.deletingLastPathComponent().appendingPathComponent("planted.etag").path
        #expect(rename(path, elsewhere) == 0)
        #expect(symlink(elsewhere, path) == 0)

        #expect(await DiskETagStore(directory: directory).cachedResponse(for: key) == nil)
        #expect(await store.cachedResponse(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.fileExists(atPath: elsewhere))
    }

    @Test("An entry that is a FIFO is a miss at once (nothing blocks), and is removed")
    func fifoEntry() async throws {
        let (store, directory, path) = try await storeWithEntry()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        #expect(unlink(path) == 0)
        #expect(mkfifo(path, 0o600) == 0)
        let started = Date()
        #expect(await store.cachedResponse(for: key) == nil)
        #expect(Date().timeIntervalSince(started) < 60)  // a FIFO opened for reading blocks forever
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A directory named like an entry is never counted or removed, by eviction or as a bad entry")
    func directoriesKept() async throws {
        let (store, directory, path) = try await storeWithEntry()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        // A user's directory with an entry's extension, older than every entry.
        let foreign = directory.appendingPathComponent("backup.etag")
        try FileManager.default.createDirectory(at: foreign, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: foreign.appendingPathComponent("important.txt"))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: foreign.path)
        let small = DiskETagStore(directory: directory, maxBytes: 4096)
        for index in 0..<8 {
            await small.store(entry(String(repeating: "x", count: 600) + "\(index)"), for: "GET https://h/\(index)")
        }
        #expect(FileManager.default.fileExists(atPath: foreign.appendingPathComponent("important.txt").path))
        // An entry's own name taken by a directory: a miss, the directory left as it is (the
        // entry may have been evicted above).
        _ = unlink(path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path).appendingPathComponent("file.txt"))
        #expect(await store.cachedResponse(for: key) == nil)
        #expect(FileManager.default.fileExists(atPath: path + "/file.txt"))
    }

    @Test("An entry writable by others, owned by another user or larger than the cap is a miss")
    func foreignEntries() async throws {
        let (store, directory, path) = try await storeWithEntry()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let valid = try Data(contentsOf: URL(fileURLWithPath: path))

        #expect(chmod(path, 0o666) == 0)
        #expect(await store.cachedResponse(for: key) == nil)

        try valid.write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o600) == 0)
        #expect(await store.cachedResponse(for: key)?.body == Data("cached".utf8))
        // Another user's file: chown needs root, which CI and this suite's machines run as.
        #expect(chown(path, 65534, 65534) == 0, "chown needs root (errno \(errno))")
        #expect(await store.cachedResponse(for: key) == nil)

        try valid.write(to: URL(fileURLWithPath: path))
        #expect(await DiskETagStore(directory: directory).cachedResponse(for: key)?.body == Data("cached".utf8))
        #expect(await DiskETagStore(directory: directory, maxBytes: valid.count - 1).cachedResponse(for: key) == nil)
    }
}
