import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ReauthTransport` at two edges found by review: a body stream (which can be read once) and a
/// 401 that comes from another origin. Both on the wire, for every transport.
@Suite("ReauthTransport: a body stream after a refresh, a 401 from another origin", .serialized)
struct ReauthEdgeTests {
    @Test(
        "A POST with a body stream: after the refresh, the retry sends the body whole (it crashed the process)",
        arguments: TransportKind.all)
    func bodyStreamRetried(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(
            "POST", "/upload",
            handler: LoopbackServer.sequence([LoopbackResponse(status: 401), LoopbackResponse.text("stored")]))
        let auth = InMemoryAuthService(token: "t0")
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth, refreshToken: { try await auth.saveAccessToken("t1") })
        var request = URLRequest(url: server.url("/upload"))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("payload".utf8))
        let (body, response) = try await reauth.data(for: try await auth.authorize(request))
        #expect(response.statusCode == 200)
        #expect(body == Data("stored".utf8))
        let received = server.requests(path: "/upload")
        #expect(received.map(\.bodyText) == ["payload", "payload"])
        #expect(received.map { $0.header("Authorization") } == ["Bearer t0", "Bearer t1"])
        #expect(reauth.refreshCount == 1)
    }

    @Test("A body stream already read is a typed error, never a trap")
    func consumedStream() {
        let stream = InputStream(data: Data("x".utf8))
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 8)
        _ = stream.read(&buffer, maxLength: buffer.count)
        stream.close()
        guard case .failure(let error) = RequestBodyStream.readAll(stream, limit: 1 << 20, url: nil) else {
            Issue.record("a closed stream read as a body")
            return
        }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("already read"))
    }

    @Test(
        "A 401 from another origin after a redirect is returned as it is: no refresh, the loop guard kept",
        arguments: TransportKind.all)
    func foreign401(kind: TransportKind) async throws {
        let api = try LoopbackServer()
        defer { api.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        let elsewhere = other.url("/x").absoluteString
        api.route("GET", "/go") { _ in LoopbackResponse(status: 302, headers: [("Location", elsewhere)]) }
        api.route(
            "GET", "/data",
            handler: LoopbackServer.sequence([LoopbackResponse(status: 401), LoopbackResponse.text("ok")]))
        other.route("GET", "/x") { _ in LoopbackResponse(status: 401) }
        let auth = InMemoryAuthService(token: "t0")
        let refreshes = Locked(0)
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth,
            refreshToken: {
                refreshes.withLock { $0 += 1 }
                try await auth.saveAccessToken("t\(refreshes.current)")
            })
        for _ in 0..<4 {
            let (_, response) = try await reauth.data(for: try await auth.authorize(URLRequest(url: api.url("/go"))))
            #expect(response.statusCode == 401)
        }
        #expect(reauth.refreshCount == 0)
        #expect(other.receivedRequests.allSatisfy { $0.header("Authorization") == nil })
        // The API's own 401 still refreshes: the guard was not spent by the other host.
        let (body, response) = try await reauth.data(for: try await auth.authorize(URLRequest(url: api.url("/data"))))
        #expect(response.statusCode == 200)
        #expect(body == Data("ok".utf8))
        #expect(refreshes.current == 1)
    }

    @Test(
        "A 401 for the caller's own credential (another origin's Basic) is returned as it is: ours never replaces it",
        arguments: TransportKind.all)
    func callersOwnCredential(kind: TransportKind) async throws {
        let partner = try LoopbackServer()
        defer { partner.shutdown() }
        partner.route("GET", "/x") { _ in LoopbackResponse(status: 401) }
        let auth = InMemoryAuthService(token: "api-secret")
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth, refreshToken: { try await auth.saveAccessToken("t1") })
        var request = URLRequest(url: partner.url("/x"))
        request.setValue("Basic cGFydG5lcjpwdw==", forHTTPHeaderField: "Authorization")
        let (_, response) = try await reauth.data(for: request)
        #expect(response.statusCode == 401)
        // Before: a second request with `Bearer api-secret`, our token at the partner's origin.
        #expect(partner.receivedRequests.map { $0.header("Authorization") } == ["Basic cGFydG5lcjpwdw=="])
        #expect(reauth.refreshCount == 0)
    }

    @Test(
        "A chain that leaves the origin and comes back (A → B → A) ending in 401: no refresh, no sign-out",
        arguments: TransportKind.all)
    func bounced401(kind: TransportKind) async throws {
        let api = try LoopbackServer()
        defer { api.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        let back = api.url("/me").absoluteString
        api.route("GET", "/start") { _ in
            LoopbackResponse(status: 302, headers: [("Location", other.url("/bounce").absoluteString)])
        }
        other.route("GET", "/bounce") { _ in LoopbackResponse(status: 302, headers: [("Location", back)]) }
        api.route("GET", "/me") { request in
            request.header("Authorization") == nil ? LoopbackResponse(status: 401) : .text("me")
        }
        let auth = InMemoryAuthService(token: "t0")
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth, refreshToken: { try await auth.saveAccessToken("t1") })
        let (_, response) = try await reauth.data(for: try await auth.authorize(URLRequest(url: api.url("/start"))))
        #expect(response.statusCode == 401)
        #expect(reauth.refreshCount == 0)
        #expect(api.requests(path: "/me").count == 1)
        #expect(other.receivedRequests.allSatisfy { $0.header("Authorization") == nil })

        // The service, told about 401s, is not told about this one (it signed the user out).
        let handler = InvalidationRecorder(server: api)
        let service = HTTPNetworkService(transport: try kind.make(), authService: auth, invalidationHandler: handler)
        let environment = DefaultAPIEnvironment(baseURL: api.baseURL)
        await #expect(throws: NetworkError.self) {
            _ = try await service.requestData(
                to: Endpoint(path: "/start", method: .get, requiresAuth: true), via: environment)
        }
        #expect(handler.requestsSeenAtEachCall.isEmpty)
        // Its own 401, unredirected, still is.
        await #expect(throws: NetworkError.self) {
            _ = try await service.requestData(
                to: Endpoint(path: "/me", method: .get, requiresAuth: false), via: environment)
        }
        #expect(handler.requestsSeenAtEachCall.count == 1)
    }

    @Test(
        "A retry that goes straight to the API after a first attempt's chain left the origin: its 401 refreshes",
        arguments: TransportKind.all)
    func retryAfterBounce(kind: TransportKind) async throws {
        let api = try LoopbackServer()
        defer { api.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        let down = other.url("/down").absoluteString
        let calls = Locked(0)
        // First attempt: a redirect to another origin (the credential is dropped there), which
        // answers 503. The retry reaches the API with the credential and gets a 401 for it.
        api.route("GET", "/me") { request in
            if request.header("Authorization") == "Bearer t1" { return .text("me") }
            let call = calls.withLock { count -> Int in
                count += 1
                return count
            }
            return call == 1
                ? LoopbackResponse(status: 302, headers: [("Location", down)]) : LoopbackResponse(status: 401)
        }
        other.route("GET", "/down") { _ in LoopbackResponse(status: 503) }
        let auth = InMemoryAuthService(token: "t0")
        let reauth = ReauthTransport(
            inner: RetryTransport(
                inner: try kind.make(), policy: RetryPolicy(maxRetries: 1, baseDelay: 0, jitter: nil),
                clock: RecordingClock(randomUnit: 0).clock),
            authService: auth, refreshToken: { try await auth.saveAccessToken("t1") })
        let (body, response) = try await reauth.data(for: try await auth.authorize(URLRequest(url: api.url("/me"))))
        // Before: the first attempt's dropped credential was held against the retry's 401, which
        // was returned as it was (no refresh).
        #expect(response.statusCode == 200)
        #expect(body == Data("me".utf8))
        #expect(reauth.refreshCount == 1)
        #expect(
            api.requests(path: "/me").map { $0.header("Authorization") } == ["Bearer t0", "Bearer t0", "Bearer t1"])
        #expect(other.receivedRequests.map { $0.header("Authorization") } == [nil])
    }

    @Test(
        "The refresh is held to the transport's limit, not to that of the endpoint whose 401 started it",
        arguments: TransportKind.all)
    func refreshLimit(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/tiny", handler: LoopbackServer.sequence([LoopbackResponse(status: 401), .text("ok")]))
        server.route("POST", "/token") { _ in .json("{\"token\":\"" + String(repeating: "t", count: 1_000) + "\"}") }
        let auth = InMemoryAuthService(token: "t0")
        let inner = try kind.make()
        let reauth = ReauthTransport(
            inner: inner, authService: auth,
            refreshToken: {
                var request = URLRequest(url: server.url("/token"))
                request.httpMethod = "POST"
                let (body, _) = try await inner.data(for: request)
                guard body.count > 1_000 else { throw URLError(.cannotParseResponse) }
                try await auth.saveAccessToken("t1")
            })
        let service = HTTPNetworkService(transport: reauth, authService: auth)
        let data = try await service.requestData(
            to: Endpoint(path: "/tiny", method: .get, requiresAuth: true, maxResponseBytes: 64),
            via: DefaultAPIEnvironment(baseURL: server.baseURL))
        #expect(data.data == Data("ok".utf8))
        #expect(server.requests(path: "/token").count == 1)
        #expect(server.requests(path: "/tiny").map { $0.header("Authorization") } == ["Bearer t0", "Bearer t1"])
    }

    @Test(
        "A refresh whose own request gets a 401 fails at once, not at the refresh timeout (it waited for itself)",
        arguments: TransportKind.all)
    func refreshsOwn401(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/data") { _ in LoopbackResponse(status: 401) }
        server.route("POST", "/refresh") { _ in LoopbackResponse(status: 401) }
        let auth = InMemoryAuthService(token: "t0")
        let box = Locked<ReauthTransport?>(nil)
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth, policy: ReauthPolicy(refreshTimeout: 600),
            refreshToken: {
                var request = URLRequest(url: server.url("/refresh"))
                request.httpMethod = "POST"
                guard let reauth = box.current else { return }
                let (_, response) = try await reauth.data(for: try await auth.authorize(request))
                guard response.statusCode == 200 else { throw URLError(.userAuthenticationRequired) }
            })
        box.withLock { $0 = reauth }
        let start = Date()
        do {
            _ = try await reauth.data(for: try await auth.authorize(URLRequest(url: server.url("/data"))))
            Issue.record("the 401 did not fail the call")
        } catch let error as TransportError {
            #expect((error.underlyingError as? ReauthError)?.code == .refreshFailed, "\(error)")
        }
        // Loose for a starved run: waiting for itself, it lasted the 600 s refresh timeout.
        #expect(Date().timeIntervalSince(start) < 200, "took \(Date().timeIntervalSince(start)) s")
        #expect(server.requests(path: "/refresh").count == 1)
    }

    @Test(
        "A request made while the service's request runs (a logger's) is not vouched for by it: the caller's own credential stays theirs",
        arguments: TransportKind.all)
    func nestedRequestNotVouched(kind: TransportKind) async throws {
        let api = try LoopbackServer()
        defer { api.shutdown() }
        let partner = try LoopbackServer()
        defer { partner.shutdown() }
        api.route("GET", "/me") { _ in .text("me") }
        partner.route("GET", "/x") { _ in LoopbackResponse(status: 401) }
        let auth = InMemoryAuthService(token: "api-secret")
        let reauth = ReauthTransport(
            inner: try kind.make(), authService: auth, refreshToken: { try await auth.saveAccessToken("t1") })
        var own = URLRequest(url: partner.url("/x"))
        own.setValue("Basic cGFydG5lcjpwdw==", forHTTPHeaderField: "Authorization")
        let partnerRequest = own
        let nested = Locked<Task<Int, any Error>?>(nil)
        // The logger starts a request of its own from inside the service's request (a task
        // inherits the task-locals in force there, the service's witness among them).
        let logger = ClosureNetworkLogger { record in
            guard record.event == .request else { return }
            nested.withLock {
                $0 = Task { try await reauth.data(for: partnerRequest).1.statusCode }
            }
        }
        let service = HTTPNetworkService(transport: reauth, authService: auth, logger: logger)
        _ = try await service.requestData(
            to: Endpoint(path: "/me", method: .get, requiresAuth: true),
            via: DefaultAPIEnvironment(baseURL: api.baseURL))
        let status = try await nested.current?.value
        #expect(status == 401)
        #expect(partner.receivedRequests.map { $0.header("Authorization") } == ["Basic cGFydG5lcjpwdw=="])
        #expect(reauth.refreshCount == 0)
    }

    @Test(
        "A refresh that hands out a token with CR/LF is a failed refresh: a 401 with ReauthError, nothing sent with it",
        arguments: TransportKind.all)
    func unusableRefreshedToken(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/data") { _ in .json(#"{"error":"expired"}"#, status: 401) }
        let auth = InMemoryAuthService(token: "t0")
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) {
            try await auth.keyChainStore.save("t2\r\nX-Injected: 1", forKey: "accessToken")
        }
        do {
            _ = try await reauth.data(for: try await auth.authorize(URLRequest(url: server.url("/data"))))
            Issue.record("the 401 did not fail the call")
        } catch let error as TransportError {
            // Before: the refresh counted as a success, and the retry failed with .invalidRequest
            // (no 401, so no sign-out), as would every later request, before sending.
            #expect((error.underlyingError as? ReauthError)?.code == .refreshFailed, "\(error)")
        }
        #expect(server.requests(path: "/data").count == 1)
        #expect(server.requests(path: "/data").allSatisfy { $0.header("X-Injected") == nil })
    }

    @Test("A waiter arriving after its refresh's outcome was dropped retries at once instead of waiting for good")
    func outcomeDroppedBeforeTheWait() {
        var shared = ReauthTransport.Shared(state: RefreshCoordinatorState(maxRefreshes: 100, window: 60))
        shared.refreshNumber = 12
        shared.inFlight = 12
        // Refresh 2 ended long ago (its outcome gone: only the last eight are kept); 11 failed.
        shared.outcomes[11] = .failure(ReauthError(.refreshFailed, message: "refused"))
        #expect(ReauthTransport.settledOutcome(of: 12, in: shared) == nil, "in flight: wait")
        #expect(ReauthTransport.settledOutcome(of: 2, in: shared).map { (try? $0.get()) != nil } == true)
        #expect(ReauthTransport.settledOutcome(of: 11, in: shared).map { (try? $0.get()) == nil } == true)
        shared.inFlight = nil
        #expect(ReauthTransport.settledOutcome(of: 12, in: shared) != nil, "ended, outcome dropped: no wait")
    }
}
