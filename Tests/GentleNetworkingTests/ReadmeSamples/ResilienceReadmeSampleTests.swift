// The README samples for RetryTransport, ReauthTransport, ETagTransport and the stacking order,
// compiled as written, then run against the loopback server.
import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// The README's "custom ETagStoreProtocol for disk or database storage".
struct MyDiskETagStore: ETagStoreProtocol {
    let disk: DiskETagStore

    init(directory: URL = FileManager.default.temporaryDirectory.appendingPathComponent("my-etags")) {
        disk = DiskETagStore(directory: directory)
    }

    func cachedResponse(for key: String) async -> CachedResponse? { await disk.cachedResponse(for: key) }
    func store(_ response: CachedResponse, for key: String) async { await disk.store(response, for: key) }
    func remove(for key: String) async { await disk.remove(for: key) }
    func removeAll() async { await disk.removeAll() }
}

/// The samples verbatim; compiled, not called (they use URLSession.shared and the real store).
func resilienceReadmeSamples(keyChainAuthService: SystemKeyChainAuthService) -> [HTTPNetworkService] {
    let retrying = HTTPNetworkService(
        transport: RetryTransport(
            inner: URLSessionTransport(session: .shared),
            policy: RetryPolicy(
                maxRetries: 3,
                baseDelay: 0.5,
                maxDelay: 30.0,
                jitter: .full  // .full | .equal | .decorrelated
            )
        )
    )

    let reauthenticating = HTTPNetworkService(
        transport: ReauthTransport(
            inner: RetryTransport(),
            authService: keyChainAuthService,
            refreshToken: {
                // 1. Call your refresh endpoint to obtain a new access credential
                // 2. Save the new credential via authService so future requests use it
            }
        )
    )

    let caching = HTTPNetworkService(
        transport: ETagTransport(
            inner: URLSessionTransport(session: .shared)
        )
    )

    let customStore = HTTPNetworkService(
        transport: ETagTransport(
            inner: URLSessionTransport(session: .shared),
            store: MyDiskETagStore()
        )
    )
    return [retrying, reauthenticating, caching, customStore]
}

@Suite("README samples: retries, re-authentication and ETags")
struct ResilienceReadmeSampleTests {
    @Test("The samples build services whose transports stack in the README's order")
    func samplesStack() throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let services = resilienceReadmeSamples(
            keyChainAuthService: SystemKeyChainAuthService(
                fileStore: FileCredentialStore(directory: directory.appendingPathComponent("gn"))))
        #expect(services[0].transport is RetryTransport)
        let reauth = try #require(services[1].transport as? ReauthTransport)
        #expect(reauth.inner is RetryTransport)
        #expect(services[2].transport is ETagTransport)
        #expect((services[3].transport as? ETagTransport)?.store is MyDiskETagStore)
    }

    @Test("The custom store sample revalidates over the wire")
    func customStoreOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        etagRoute(server, path: "/m", body: Locked(#"{"id":3,"property":"p"}"#))
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = HTTPNetworkService(
            transport: ETagTransport(
                inner: URLSessionTransport(session: makeIsolatedSession()),
                store: MyDiskETagStore(directory: directory.appendingPathComponent("etags"))
            ),
            authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let first: Model = try await service.request(to: Endpoint(path: "/m", method: .get), via: environment)
        let second: Model = try await service.request(to: Endpoint(path: "/m", method: .get), via: environment)
        #expect(first == second)
        #expect(server.requests(path: "/m").map { $0.header("If-None-Match") != nil } == [false, true])
    }
}
