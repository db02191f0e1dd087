import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Key-chain stores (KeyChainStoreProtocol)")
struct KeyChainStoreTests {
    /// A credentials file store in a fresh directory, and that directory's root to remove.
    func temporaryFileStore() -> (FileCredentialStore, URL) {
        let root = makeTemporaryDirectory()
        return (FileCredentialStore(directory: root.appendingPathComponent("gn")), root)
    }

    @Test("MockKeyChainStore saves, reads and deletes per key, in memory")
    func mockStore() async throws {
        let store = MockKeyChainStore()
        #expect(try await store.value(forKey: "a") == nil)
        try await store.save("1", forKey: "a")
        try await store.save("2", forKey: "b")
        try await store.save("3", forKey: "a")
        #expect(try await store.value(forKey: "a") == "3")
        try await store.deleteValue(forKey: "a")
        try await store.deleteValue(forKey: "never-saved")
        #expect(try await store.value(forKey: "a") == nil)
        #expect(await store.values == ["b": "2"])
        #expect(await MockKeyChainStore().values.isEmpty, "each instance has its own values")
    }

    @Test("SystemKeyChainStore over a file keeps '<service>/<key>' entries in a private file")
    func fileBackedStore() async throws {
        let (files, root) = temporaryFileStore()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = SystemKeyChainStore(service: "com.example.app", fileStore: files)
        #expect(store.service == "com.example.app")
        #expect(try await store.value(forKey: "accessToken") == nil)
        try await store.save("tok", forKey: "accessToken")
        try await store.save("ref", forKey: "refreshToken")
        #expect(try await store.value(forKey: "accessToken") == "tok")
        #expect(try files.value(for: "com.example.app/accessToken") == "tok")
        #expect(try files.value(for: "com.example.app/refreshToken") == "ref")
        let other = SystemKeyChainStore(service: "other", fileStore: files)
        #expect(try await other.value(forKey: "accessToken") == nil, "services do not see each other's keys")
        try await store.deleteValue(forKey: "accessToken")
        try await store.deleteValue(forKey: "accessToken")
        #expect(try await store.value(forKey: "accessToken") == nil)
        var info = stat()
        stat(try #require(files.fileURL).path, &info)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    @Test("Two (service, key) pairs never share an entry: a '/' in the service is escaped")
    func namespaceCollision() async throws {
        let (files, root) = temporaryFileStore()
        defer { try? FileManager.default.removeItem(at: root) }
        let prod = SystemKeyChainStore(service: "com.example.app/prod", fileStore: files)
        let other = SystemKeyChainStore(service: "com.example.app", fileStore: files)
        try await prod.save("prod-token", forKey: "accessToken")
        #expect(try await other.value(forKey: "prod/accessToken") == nil)
        #expect(try await prod.value(forKey: "accessToken") == "prod-token")
        #expect(try files.value(for: "com.example.app%2Fprod/accessToken") == "prod-token")
        // The auth services over one file, service and account swapped around a '/'.
        let a = SystemKeyChainAuthService(service: "svc/a", account: "b", fileStore: files)
        let b = SystemKeyChainAuthService(service: "svc", account: "a/b", fileStore: files)
        try await a.saveAccessToken("token-of-a")
        #expect(try await b.loadAccessToken() == nil)
        // An escape in the service cannot be forged by a service spelled with it.
        let percent = SystemKeyChainStore(service: "x%2Fy", fileStore: files)
        let slash = SystemKeyChainStore(service: "x/y", fileStore: files)
        try await percent.save("p", forKey: "k")
        #expect(try await slash.value(forKey: "k") == nil)
    }

    @Test("SystemKeyChainAuthService's keyChainStore is the same storage as its token methods")
    func authServiceSharesStorage() async throws {
        let (files, root) = temporaryFileStore()
        defer { try? FileManager.default.removeItem(at: root) }
        let auth = SystemKeyChainAuthService(service: "svc", account: "acct", fileStore: files)
        #expect(auth.keyChainKey == "acct")
        try await auth.saveAccessToken("t1")
        #expect(try await auth.keyChainStore.value(forKey: auth.keyChainKey) == "t1")
        #expect(try files.value(for: "svc/acct") == "t1", "the file layout is unchanged")
        try await auth.keyChainStore.save("t2", forKey: "acct")
        #expect(try await auth.loadAccessToken() == "t2")
        #expect(SystemKeyChainAuthService().keyChainKey == "accessToken")
    }

    @Test("A too-open credentials file is refused with CredentialStoreError through the store")
    func insecureFileIsRefused() async throws {
        let (files, root) = temporaryFileStore()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = SystemKeyChainStore(service: "svc", fileStore: files)
        try await store.save("tok", forKey: "k")
        chmod(try #require(files.fileURL).path, 0o644)
        await #expect {
            _ = try await SystemKeyChainStore(service: "svc", fileStore: files).value(forKey: "k")
        } throws: { error in
            (error as? CredentialStoreError)?.code == .insecurePermissions
        }
    }

    @Test("Keychain statuses become KeyChainStoreError; file errors stay CredentialStoreError")
    func errorMapping() {
        let status = SystemKeyChainStore.keyChainError(
            CredentialStoreError(.keychainFailure(-34018), message: "missing entitlement"))
        #expect(status as? KeyChainStoreError == .unexpectedStatus(-34018))
        let notText = SystemKeyChainStore.keyChainError(CredentialStoreError(.corruptFile, message: "not UTF-8"))
        #expect(notText as? KeyChainStoreError == .stringDecodingFailed)
        let file = SystemKeyChainStore.keyChainError(
            CredentialStoreError(.corruptFile, path: "/x/credentials.json", message: "bad"))
        #expect((file as? CredentialStoreError)?.code == .corruptFile)
    }

    @Test(
        "The default service is the bundle identifier, else GentleNetworking (Apple) or GentleNetworking.<program> (Linux)"
    )
    func defaultService() {
        #if canImport(Security)
            #expect(SystemKeyChainStore.defaultService == (Bundle.main.bundleIdentifier ?? "GentleNetworking"))
        #else
            // One name per program: every program of a user shares the credentials file.
            #expect(
                SystemKeyChainStore.defaultService
                    == (Bundle.main.bundleIdentifier ?? "GentleNetworking." + ProcessInfo.processInfo.processName))
            #expect(SystemKeyChainAuthService().service == SystemKeyChainStore.defaultService)
        #endif
        #expect(SystemKeyChainStore().service == SystemKeyChainStore.defaultService)
        #if !canImport(Security)
            #expect(SystemKeyChainStore().fileStore != nil, "Linux uses the credentials file")
        #endif
    }
}

/// Auth services written as the seed library's users write them: only some members declared.
@Suite("AuthServiceProtocol defaults over keyChainStore")
struct AuthServiceDefaultsTests {
    /// Declares only the store, relying on every default.
    struct StoreOnlyAuth: AuthServiceProtocol {
        let keyChainStore: any KeyChainStoreProtocol
    }

    /// Declares a store, its own key and header.
    struct CustomKeyAuth: AuthServiceProtocol {
        let keyChainStore: any KeyChainStoreProtocol
        var keyChainKey: String { "apiKey" }
        var headerField: String { "X-API-Key" }
        var headerValuePrefix: String { "" }
    }

    /// Declares nothing at all.
    struct NothingAuth: AuthServiceProtocol {}

    /// Written against our API before the store existed: the token methods only.
    struct TokenMethodsAuth: AuthServiceProtocol {
        func loadAccessToken() async throws -> String? { "fixed" }
        func saveAccessToken(_ token: String) async throws {}
        func deleteAccessToken() async throws {}
    }

    let request = URLRequest(url: URL(string: "https://api.example.com/me")!)

    @Test("A conformer declaring only keyChainStore saves, loads, authorizes and deletes through it")
    func storeOnly() async throws {
        let store = MockKeyChainStore()
        let auth = StoreOnlyAuth(keyChainStore: store)
        #expect(auth.keyChainKey == "accessToken")
        #expect(try await auth.authorize(request).value(forHTTPHeaderField: "Authorization") == nil)
        try await auth.saveAccessToken("abc")
        #expect(await store.values == ["accessToken": "abc"])
        #expect(try await auth.loadAccessToken() == "abc")
        #expect(try await auth.authorize(request).value(forHTTPHeaderField: "Authorization") == "Bearer abc")
        try await auth.deleteAccessToken()
        #expect(await store.values.isEmpty)
        #expect(try await auth.authorize(request).value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test("keyChainKey, headerField and headerValuePrefix are honoured by the defaults")
    func customKey() async throws {
        let store = MockKeyChainStore(values: ["apiKey": "k-1", "accessToken": "unused"])
        let auth = CustomKeyAuth(keyChainStore: store)
        let authorized = try await auth.authorize(request)
        #expect(authorized.value(forHTTPHeaderField: "X-API-Key") == "k-1")
        #expect(authorized.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test("A store error propagates instead of sending the request without credentials")
    func storeErrorPropagates() async {
        let auth = StoreOnlyAuth(keyChainStore: FailingStore())
        await #expect(throws: KeyChainStoreError.unexpectedStatus(-25308)) { try await auth.authorize(request) }
    }

    @Test("A conformer declaring neither a store nor token methods fails loudly")
    func nothingDeclared() async {
        for call in [
            { _ = try await NothingAuth().loadAccessToken() },
            { try await NothingAuth().saveAccessToken("t") },
            { try await NothingAuth().deleteAccessToken() },
            { _ = try await NothingAuth().authorize(request) },
        ] as [@Sendable () async throws -> Void] {
            await #expect {
                try await call()
            } throws: { error in
                (error as? CredentialStoreError)?.code == .storeNotConfigured
            }
        }
    }

    @Test("Conformers with their own token methods are unchanged")
    func tokenMethods() async throws {
        let authorized = try await TokenMethodsAuth().authorize(request)
        #expect(authorized.value(forHTTPHeaderField: "Authorization") == "Bearer fixed")
    }

    @Test("InMemoryAuthService keeps its token in its keyChainStore")
    func inMemory() async throws {
        let auth = InMemoryAuthService(token: "first")
        #expect(try await auth.keyChainStore.value(forKey: auth.keyChainKey) == "first")
        try await auth.keyChainStore.save("second", forKey: "accessToken")
        #expect(try await auth.loadAccessToken() == "second")
        try await auth.deleteAccessToken()
        #expect(try await auth.keyChainStore.value(forKey: "accessToken") == nil)
        #expect(try await InMemoryAuthService().loadAccessToken() == nil)
    }

    @Test("HTTPNetworkService sends the token of a store-only conformer on the wire")
    func onTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { _ in .json(#"{"id":1,"property":"p"}"#) }
        let store = MockKeyChainStore(values: ["accessToken": "wire-token"])
        let service = HTTPNetworkService(
            transport: URLSessionTransport(session: makeIsolatedSession()),
            authService: StoreOnlyAuth(keyChainStore: store))
        let model: Model = try await service.request(
            to: Endpoint(path: "/me", method: .get, requiresAuth: true),
            via: DefaultAPIEnvironment(baseURL: server.baseURL))
        #expect(model == Model(id: 1, property: "p"))
        #expect(server.requests(path: "/me").first?.bearerToken == "wire-token")
    }
}

/// A store whose every call fails with a Keychain status.
private struct FailingStore: KeyChainStoreProtocol {
    func save(_ value: String, forKey key: String) async throws { throw KeyChainStoreError.unexpectedStatus(-25308) }
    func value(forKey key: String) async throws -> String? { throw KeyChainStoreError.unexpectedStatus(-25308) }
    func deleteValue(forKey key: String) async throws { throw KeyChainStoreError.unexpectedStatus(-25308) }
}
