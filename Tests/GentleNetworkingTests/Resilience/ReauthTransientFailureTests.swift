import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

/// A refresh that fails for a reason that says nothing about the credential (the token endpoint
/// unreachable or answering 503, the refresh timeout) signs nobody out: the call throws the 401
/// with a transient `ReauthError`, the invalidation handler is not called, and the next 401
/// refreshes again. A refresh the token endpoint refuses (`invalid_grant`) still calls it once.
/// Over real sockets on every transport; the refresh calls its token endpoint through a service.
@Suite("ReauthTransport: a transient refresh failure keeps the session")
struct ReauthTransientFailureTests {
    enum TokenEndpoint: String, CaseIterable, CustomStringConvertible, Sendable {
        case unavailable  // 503
        case unreachable  // a port that refuses connections
        case rejected  // 400 invalid_grant

        var description: String { rawValue }
        var isTransient: Bool { self != .rejected }
    }

    @Test(
        "The handler is called only when the token endpoint rejects the refresh",
        arguments: TransportKind.all, TokenEndpoint.allCases)
    func transientFailure(kind: TransportKind, endpoint: TokenEndpoint) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let refusing = try RefusingPort()
        server.route("GET", "/me") { _ in .text("expired", status: 401) }
        server.route("POST", "/token") { _ in
            endpoint == .rejected
                ? .json(#"{"error":"invalid_grant"}"#, status: 400) : .json(#"{"error":"busy"}"#, status: 503)
        }
        let tokenBase = endpoint == .unreachable ? refusing.baseURL : server.baseURL
        let tokenService = HTTPNetworkService(transport: try kind.make())
        let auth = InMemoryAuthService(token: "old-token")
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) {
            try await tokenService.requestVoid(
                to: Endpoint(path: "/token", method: .post), via: DefaultAPIEnvironment(baseURL: tokenBase))
            try await auth.saveAccessToken("new-token")
        }
        let handler = InvalidationRecorder(server: server)
        let service = HTTPNetworkService(transport: reauth, authService: auth, invalidationHandler: handler)

        for attempt in 1...4 {
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/me", method: .get, requiresAuth: true),
                    via: DefaultAPIEnvironment(baseURL: server.baseURL))
                Issue.record("\(attempt): a 401 did not throw")
            } catch let error as NetworkError {
                #expect(error.kind == .httpStatusError(.unauthorized), "\(error)")
                let cause = try #require(error.underlyingError as? ReauthError, "\(error)")
                // The fourth 401 within the window trips the loop guard (3 refreshes per 60 s),
                // transient too when the refreshes failed for a transient reason.
                #expect(cause.code == (attempt == 4 ? .refreshLimitExceeded : .refreshFailed), "\(cause)")
                #expect(cause.isTransient == endpoint.isTransient, "\(cause)")
            }
        }

        // What the servers saw: a 401 and a refresh per call (the next 401 refreshes again), up
        // to the loop guard.
        #expect(server.requests(path: "/me").count == 4)
        #expect(server.requests(path: "/token").count == (endpoint == .unreachable ? 0 : 3))
        #expect(reauth.refreshCount == 3)
        #expect(
            handler.requestsSeenAtEachCall.count == (endpoint.isTransient ? 0 : 4),
            "handler calls: \(handler.requestsSeenAtEachCall)")
        #expect(try await auth.loadAccessToken() == "old-token")
    }

    @Test("A refresh that times out keeps the session too (no handler call), and is transient")
    func timeout() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { _ in .text("expired", status: 401) }
        let auth = InMemoryAuthService(token: "old-token")
        let reauth = ReauthTransport(
            inner: try TransportKind.all[0].make(), authService: auth,
            policy: ReauthPolicy(refreshTimeout: 0.2)
        ) {
            try await Task.sleep(nanoseconds: 60_000_000_000)
        }
        let handler = InvalidationRecorder(server: server)
        let service = HTTPNetworkService(transport: reauth, authService: auth, invalidationHandler: handler)

        do {
            try await service.requestVoid(
                to: Endpoint(path: "/me", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
            Issue.record("a 401 did not throw")
        } catch let error as NetworkError {
            #expect(error.kind == .httpStatusError(.unauthorized), "\(error)")
            let cause = try #require(error.underlyingError as? ReauthError, "\(error)")
            #expect(cause.code == .refreshTimedOut && cause.isTransient, "\(cause)")
        }
        #expect(handler.requestsSeenAtEachCall.isEmpty, "\(handler.requestsSeenAtEachCall)")
    }
}

/// An auth service whose store works for the first `working` reads, then fails.
private final class FailingStoreAuthService: AuthServiceProtocol, @unchecked Sendable {
    // @unchecked: `reads` is behind `lock`.
    struct StoreDown: Error {}
    private let lock = NSLock()
    private var reads = 0
    private let working: Int

    init(working: Int) { self.working = working }

    func loadAccessToken() async throws -> String? {
        let read = lock.withLock {
            reads += 1
            return reads
        }
        if read > working { throw StoreDown() }
        return "stored-token"
    }
    func saveAccessToken(_ token: String) async throws {}
    func deleteAccessToken() async throws {}
}

@Suite("ReauthTransport: an auth store that fails after a 401 is a typed error")
struct ReauthStoreFailureTests {
    @Test(
        "A store that fails when the 401 is handled: NetworkError .authorizationFailed with the store's error; no retry",
        arguments: TransportKind.all)
    func storeFailure(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { _ in .text("expired", status: 401) }
        let auth = FailingStoreAuthService(working: 1)
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) {}
        let service = HTTPNetworkService(transport: reauth, authService: auth)

        do {
            try await service.requestVoid(
                to: Endpoint(path: "/me", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
            Issue.record("no error")
        } catch let error as NetworkError {
            #expect(error.kind == .authorizationFailed, "\(error)")
            #expect(error.underlyingError is FailingStoreAuthService.StoreDown, "\(error)")
        } catch {
            Issue.record("untyped: \(type(of: error)) \(error)")
        }
        #expect(server.requests(path: "/me").count == 1, "nothing was retried")
        #expect(reauth.refreshCount == 0)
    }
}

@Suite("ReauthTransport: one refresh at a time per auth service, across stacks")
struct ReauthSharedServiceTests {
    @Test(
        "Two stacks over one auth service that get a 401 together refresh once (a rotating refresh token is spent once)"
    )
    func twoStacksOneRefresh() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", prefix: "/me") { request in
            request.header("Authorization") == "Bearer new-token"
                ? .json(#"{"id":1,"property":"ok"}"#) : .text("expired", status: 401)
        }
        // The refresh ends only once every stack's first try has reached the server (its wait is
        // cut at 25 s, inside the refresh timeout): a try sent after it would rightly go out
        // with the new token. Two stacks per transport kind.
        let stackCount = 2 * TransportKind.all.count
        server.route("POST", "/token") { [weak server] _ in
            let deadline = Date().addingTimeInterval(25)
            while Date() < deadline,
                (server?.receivedRequests.filter {
                    $0.path.hasPrefix("/me") && $0.header("Authorization") == "Bearer old-token"
                }.count ?? 0) < stackCount
            {
                Thread.sleep(forTimeInterval: 0.01)
            }
            return LoopbackResponse.json(#"{"access_token":"new-token"}"#)
        }
        let auth = InMemoryAuthService(token: "old-token")
        let refresh: @Sendable () async throws -> Void = {
            let tokenService = HTTPNetworkService(transport: URLSessionTransport(session: makeIsolatedSession()))
            try await tokenService.requestVoid(
                to: Endpoint(path: "/token", method: .post), via: DefaultAPIEnvironment(baseURL: server.baseURL))
            try await auth.saveAccessToken("new-token")
        }
        var stacks: [ReauthTransport] = []
        for kind in TransportKind.all + TransportKind.all {  // stackCount: the /token route waits for them
            stacks.append(ReauthTransport(inner: try kind.make(), authService: auth, refreshToken: refresh))
        }
        let services = stacks.map { HTTPNetworkService(transport: $0, authService: auth) }

        try await withThrowingTaskGroup(of: Model.self) { group in
            for (index, service) in services.enumerated() {
                group.addTask {
                    try await service.request(
                        to: Endpoint(path: "/me/\(index)", method: .get, requiresAuth: true),
                        via: DefaultAPIEnvironment(baseURL: server.baseURL))
                }
            }
            for try await model in group { #expect(model.property == "ok") }
        }

        #expect(server.requests(path: "/token").count == 1, "one refresh for the service, whichever stack")
        #expect(stacks.map(\.refreshCount).reduce(0, +) == 1)
        let firstTries = server.receivedRequests.filter {
            $0.path.hasPrefix("/me") && $0.header("Authorization") == "Bearer old-token"
        }
        #expect(firstTries.count == services.count, "each stack's first try got its 401 during the refresh")
    }

    @Test("Separate auth service objects keep separate refreshes")
    func separateServices() async throws {
        let first = ReauthTransport(authService: InMemoryAuthService(token: "a")) {}
        let second = ReauthTransport(authService: InMemoryAuthService(token: "a")) {}
        #expect(first.coordinator !== second.coordinator)
        let auth = InMemoryAuthService(token: "a")
        let third = ReauthTransport(authService: auth) {}
        let fourth = ReauthTransport(authService: auth) {}
        #expect(third.coordinator === fourth.coordinator)
        // SystemKeyChainAuthService is a struct: values naming one stored credential share.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gentle-share-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = FileCredentialStore(directory: directory)
        let keychainA = ReauthTransport(
            authService: SystemKeyChainAuthService(service: "s", account: "a", fileStore: file)
        ) {}
        let keychainB = ReauthTransport(
            authService: SystemKeyChainAuthService(service: "s", account: "a", fileStore: file)
        ) {}
        let otherAccount = ReauthTransport(
            authService: SystemKeyChainAuthService(service: "s", account: "b", fileStore: file)
        ) {}
        #expect(keychainA.coordinator === keychainB.coordinator)
        #expect(keychainA.coordinator !== otherAccount.coordinator)
        // Any other struct service is a value: nothing to share by.
        let fifth = ReauthTransport(authService: APIKeyAuthService(key: "k")) {}
        let sixth = ReauthTransport(authService: APIKeyAuthService(key: "k")) {}
        #expect(fifth.coordinator !== sixth.coordinator)
    }
}
