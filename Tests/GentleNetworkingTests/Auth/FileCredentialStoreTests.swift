import Foundation
import GentleNetworking
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("The file-backed credential store (SystemKeyChainAuthService on Linux)")
struct FileCredentialStoreTests {
    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }

    @Test("Saves, loads and deletes a token, with a 0700 directory and a 0600 file")
    func roundTrip() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(directory: root.appendingPathComponent("nested/gentle-networking"))
        let auth = SystemKeyChainAuthService(service: "svc", fileStore: store)
        #expect(try await auth.loadAccessToken() == nil)
        try await auth.saveAccessToken("abc")
        #expect(try await auth.loadAccessToken() == "abc")
        #expect(mode(try #require(store.directory).path) == 0o700)
        #expect(mode(try #require(store.fileURL).path) == 0o600)
        try await auth.saveAccessToken("def")
        #expect(try await auth.loadAccessToken() == "def")
        let other = SystemKeyChainAuthService(service: "other", fileStore: store)
        try await other.saveAccessToken("zzz")
        #expect(try await auth.loadAccessToken() == "def")
        try await auth.deleteAccessToken()
        #expect(try await auth.loadAccessToken() == nil)
        #expect(try await other.loadAccessToken() == "zzz")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: try #require(store.directory).path)
        // The lock file that serializes saves across processes, and the file: no temporary files.
        #expect(leftovers.sorted() == [".credentials.lock", "credentials.json"], "no temporary files are left behind")
    }

    @Test("A save that would make a file the store refuses to read throws; every other key stays readable")
    func oversizedSave() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(directory: root.appendingPathComponent("gentle-networking"))
        try store.setValue("x", for: "k2")
        // 600,000 slashes: 1.2 MB once JSON escapes each as `\/`, past the 1 MiB a file may hold.
        #expect(throws: CredentialStoreError.self) {
            try store.setValue(String(repeating: "/", count: 600_000), for: "k")
        }
        // Before: saved, and from then on every read, save and delete failed with .corruptFile.
        #expect(try store.value(for: "k2") == "x")
        #expect(try store.value(for: "k") == nil)
        try store.setValue("y", for: "k3")
        #expect(try store.value(for: "k3") == "y")
    }

    @Test("Writes are atomic: the file is replaced by rename, never rewritten in place")
    func atomicReplace() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(directory: root.appendingPathComponent("gn"))
        try store.setValue("one", for: "k")
        let path = try #require(store.fileURL).path
        var before = stat()
        stat(path, &before)
        try store.setValue("two", for: "k")
        var after = stat()
        stat(path, &after)
        #expect(before.st_ino != after.st_ino, "a new inode means the old file was swapped, not truncated")
        #expect(try store.value(for: "k") == "two")
    }

    @Test("A file readable by others is refused, like ssh does")
    func refusesOpenFile() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(directory: root.appendingPathComponent("gn"))
        try store.setValue("secret", for: "k")
        chmod(try #require(store.fileURL).path, 0o644)
        #expect {
            try store.value(for: "k")
        } throws: { error in
            (error as? CredentialStoreError)?.code == .insecurePermissions
        }
        #expect(throws: CredentialStoreError.self) { try store.setValue("new", for: "k") }
    }

    @Test("A directory open to others is refused")
    func refusesOpenDirectory() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        let store = FileCredentialStore(directory: directory)
        try store.setValue("secret", for: "k")
        chmod(directory.path, 0o755)
        #expect {
            try store.value(for: "k")
        } throws: { error in
            (error as? CredentialStoreError)?.code == .insecurePermissions
        }
    }

    @Test("A corrupt file is an error and is never overwritten")
    func corruptFile() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(directory: root.appendingPathComponent("gn"))
        try store.setValue("secret", for: "k")
        let path = try #require(store.fileURL).path
        let garbage = Data("{not json".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        #expect {
            try store.value(for: "k")
        } throws: { error in
            (error as? CredentialStoreError)?.code == .corruptFile
        }
        #expect(throws: CredentialStoreError.self) { try store.setValue("new", for: "k") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test("The default location follows XDG_CONFIG_HOME, then ~/.config")
    func defaultLocation() {
        #expect(
            FileCredentialStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"])?.path
                == "/x/cfg/gentle-networking")
        #expect(
            FileCredentialStore.defaultDirectory(environment: ["HOME": "/home/u"])?.path
                == "/home/u/.config/gentle-networking")
        #expect(
            FileCredentialStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"])?.path
                == "/home/u/.config/gentle-networking")
        #expect(FileCredentialStore.defaultDirectory(environment: [:]) == nil)
    }

    @Test("No config directory is a typed error")
    func noDirectory() {
        #expect {
            try FileCredentialStore(directory: nil as URL?).value(for: "k")
        } throws: { error in
            (error as? CredentialStoreError)?.code == .noConfigDirectory
        }
    }

    @Test("Concurrent writers do not lose or corrupt the file")
    func concurrentWriters() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(directory: root.appendingPathComponent("gn"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask { try store.setValue("v\(index)", for: "k\(index)") }
            }
            try await group.waitForAll()
        }
        for index in 0..<40 {
            #expect(try store.value(for: "k\(index)") == "v\(index)")
        }
    }

    @Test("The in-memory store saves, loads and deletes")
    func inMemory() async throws {
        let auth = InMemoryAuthService()
        #expect(try await auth.loadAccessToken() == nil)
        try await auth.saveAccessToken("a")
        #expect(try await auth.loadAccessToken() == "a")
        let request = try await auth.authorize(URLRequest(url: URL(string: "https://h/")!))
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer a")
        try await auth.deleteAccessToken()
        #expect(try await auth.loadAccessToken() == nil)
    }
}
