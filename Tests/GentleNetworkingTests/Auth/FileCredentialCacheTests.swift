import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("The file-backed credential store caches the token")
struct FileCredentialCacheTests {
    func bearer(_ auth: SystemKeyChainAuthService) async throws -> String? {
        try await auth.authorize(URLRequest(url: URL(string: "https://api.example.com/x")!))
            .value(forHTTPHeaderField: "Authorization")
    }

    @Test("After the first read, authorize() does not read the file; save and delete take effect at once")
    func cachedUntilSaveOrDelete() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileCredentialStore(directory: root.appendingPathComponent("gn"))
        let auth = SystemKeyChainAuthService(fileStore: store)
        try await auth.saveAccessToken("first")
        let readsBefore = store.fileReadCount
        for _ in 0..<20 {
            #expect(try await bearer(auth) == "Bearer first")
        }
        #expect(store.fileReadCount == readsBefore + 1, "20 authorize() calls read the file once")

        try await auth.saveAccessToken("second")
        #expect(try await bearer(auth) == "Bearer second")
        let readsAfterSave = store.fileReadCount
        #expect(try await bearer(auth) == "Bearer second")
        #expect(store.fileReadCount == readsAfterSave)

        try await auth.deleteAccessToken()
        #expect(try await bearer(auth) == nil)
    }

    @Test("A file replaced by another process (another store) is read again; a chmod 644 is still refused")
    func revalidatedByStat() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        let auth = SystemKeyChainAuthService(fileStore: FileCredentialStore(directory: directory))
        let otherProcess = SystemKeyChainAuthService(fileStore: FileCredentialStore(directory: directory))
        try await auth.saveAccessToken("mine")
        #expect(try await bearer(auth) == "Bearer mine")
        try await otherProcess.saveAccessToken("theirs")
        #expect(try await bearer(auth) == "Bearer theirs")
        try await otherProcess.deleteAccessToken()
        #expect(try await bearer(auth) == nil)

        try await otherProcess.saveAccessToken("again")
        #expect(try await bearer(auth) == "Bearer again")
        let file = directory.appendingPathComponent("credentials.json").path
        #expect(chmod(file, 0o644) == 0)
        await #expect(throws: CredentialStoreError.self) { try await bearer(auth) }
        #expect(chmod(file, 0o600) == 0)
        #expect(try await bearer(auth) == "Bearer again")
        #expect(chmod(directory.path, 0o755) == 0)
        await #expect(throws: CredentialStoreError.self) { try await bearer(auth) }
        #expect(chmod(directory.path, 0o700) == 0)
    }
}
