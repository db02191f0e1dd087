import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A session that sends `Authorization: Bearer <token>` and refreshes through `POST /refresh`
/// on the loopback server (with `usesSession == false`, as the protocol asks).
private final class TokenSession: SessionManager, @unchecked Sendable {
    // @unchecked: `token` is behind `lock`.
    private let lock = NSLock()
    private var token: String
    let refreshes = Recorder<Int>()
    let refreshDelay: TimeInterval

    init(token: String, refreshDelay: TimeInterval = 0.2) {
        self.token = token
        self.refreshDelay = refreshDelay
    }

    var currentToken: String {
        lock.lock()
        defer { lock.unlock() }
        return token
    }

    func apply(_ request: inout URLRequest) {
        request.setValue("Bearer \(currentToken)", forHTTPHeaderField: "Authorization")
    }

    struct Refresh: NetworkRequest {
        var path: PathRepresentable { "refresh" }
        var method: HttpMethod { .POST }
        var usesSession: Bool { false }
    }

    struct Token: Decodable, Sendable {
        let token: String
    }

    func refresh(networkManager: NetworkManager) async -> Bool {
        refreshes.append(1)
        try? await Task.sleep(nanoseconds: UInt64(refreshDelay * 1e9))
        guard let fresh: Token = try? await networkManager.submit(Refresh()) else { return false }
        lock.withLock { token = fresh.token }
        return true
    }
}

private struct Me: NetworkRequest {
    var path: PathRepresentable { "me" }
}

/// A session whose refresh sends its token request with the session's credentials (the
/// protocol's default, `usesSession == true`), which the token endpoint answers with a 401.
private final class SelfAuthorizingRefreshSession: SessionManager, @unchecked Sendable {
    let refreshes = Recorder<Int>()

    func apply(_ request: inout URLRequest) {
        request.setValue("Bearer expired", forHTTPHeaderField: "Authorization")
    }

    struct Refresh: NetworkRequest {
        var path: PathRepresentable { "refresh" }
        var method: HttpMethod { .POST }
    }

    func refresh(networkManager: NetworkManager) async -> Bool {
        refreshes.append(1)
        let result: EmptyNetworkResponse? = try? await networkManager.submit(Refresh())
        return result != nil
    }
}

@Suite("SessionManager: credentials applied, one shared refresh on 401, one retry")
struct SessionManagerTests {
    /// `/me` answers 200 to `Bearer fresh` and 401 to anything else; `/refresh` hands out `fresh`.
    private func makeServer(refreshStatus: Int = 200) throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("GET", "/me") { request in
            request.bearerToken == "fresh"
                ? .json(#"{"id":1,"name":"Ada"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        server.route("POST", "/refresh") { _ in .json(#"{"token":"fresh"}"#, status: refreshStatus) }
        return server
    }

    /// The body `request` downloads through `manager`'s background download; `afterSubmitting`
    /// runs right after it is submitted, before its task can have run.
    private func download(
        _ request: some NetworkRequest, with manager: NetworkManager, afterSubmitting: () -> Void = {}
    ) async -> Result<Data, any Error> {
        await withCheckedContinuation { continuation in
            manager.submitBackgroundDownload(request) { result in
                continuation.resume(returning: result.flatMap { url in Result { try Data(contentsOf: url) } })
            }
            afterSubmitting()
        }
    }

    @Test(
        "20 concurrent requests with an expired token: exactly 1 refresh, each request retried once", arguments: 1...3)
    func sharedRefresh(round: Int) async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        // The refresh ends only once all 20 first tries have reached the server (up to 120 s): a
        // starved run could otherwise send one after it, rightly with the fresh token.
        server.route("POST", "/refresh") { [weak server] _ in
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, (server?.requests(path: "/me").count ?? 0) < 20 {
                Thread.sleep(forTimeInterval: 0.01)
            }
            return .json(#"{"token":"fresh"}"#)
        }
        let session = TokenSession(token: "expired")
        let manager = makeManager(server: server, sessionManager: session)

        let users = try await withThrowingTaskGroup(of: User.self) { group in
            for _ in 0..<20 { group.addTask { try await manager.submit(Me()) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(users.count == 20)
        #expect(session.refreshes.values.count == 1)
        #expect(server.requests(path: "/refresh").count == 1)
        let meRequests = server.requests(path: "/me")
        #expect(meRequests.filter { $0.bearerToken == "expired" }.count == 20)
        #expect(meRequests.filter { $0.bearerToken == "fresh" }.count == 20)
        #expect(server.requests(path: "/refresh").allSatisfy { $0.header("Authorization") == nil })
    }

    @Test("A failed refresh is NetworkError.unauthenticated, with no retry")
    func failedRefresh() async throws {
        let server = try makeServer(refreshStatus: 500)
        defer { server.shutdown() }
        let session = TokenSession(token: "expired", refreshDelay: 0)
        await #expect(throws: YNetwork.NetworkError.unauthenticated) {
            let _: User = try await makeManager(server: server, sessionManager: session).submit(Me())
        }
        #expect(server.requests(path: "/me").count == 1)
        #expect(server.requests(path: "/refresh").count == 1)
    }

    @Test("20 concurrent 401s and a refresh that fails: still exactly 1 refresh, every request unauthenticated")
    func failedSharedRefresh() async throws {
        let server = try makeServer(refreshStatus: 500)
        defer { server.shutdown() }
        // Half of the 401s arrive only after the refresh has failed: they must not start another.
        let seen = Recorder<Int>()
        server.route("GET", "/me") { _ in
            seen.append(1)
            let late = seen.values.count % 2 == 0
            return LoopbackResponse.json(#"{"error":"expired"}"#, status: 401).with {
                $0.delayBeforeHeaders = late ? 0.5 : 0
            }
        }
        // The refresh fails only once all 20 requests have reached the server (up to 120 s): one
        // a starved run sent after the failure would rightly start another refresh.
        server.route("POST", "/refresh") { _ in
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, seen.values.count < 20 { Thread.sleep(forTimeInterval: 0.01) }
            return .json(#"{"error":"unavailable"}"#, status: 500)
        }
        let session = TokenSession(token: "expired", refreshDelay: 0.05)
        let manager = makeManager(server: server, sessionManager: session)
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    do {
                        let _: User = try await manager.submit(Me())
                        return false
                    } catch {
                        return error as? YNetwork.NetworkError == .unauthenticated
                    }
                }
            }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(failures == 20)
        #expect(server.requests(path: "/refresh").count == 1)
        #expect(server.requests(path: "/me").allSatisfy { $0.bearerToken == "expired" })
    }

    @Test("A download with an expired token refreshes once and is sent again with the new one")
    func transferRefresh() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let session = TokenSession(token: "expired", refreshDelay: 0)
        let manager = makeManager(server: server, sessionManager: session)
        let result = await download(Me(), with: manager)
        #expect(try result.get() == Data(#"{"id":1,"name":"Ada"}"#.utf8))
        #expect(server.requests(path: "/me").map(\.bearerToken) == ["expired", "fresh"])
        #expect(server.requests(path: "/refresh").count == 1)
    }

    @Test("A request that still gets 401 after the refresh is unauthenticated: one retry, not a loop")
    func secondUnauthorized() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { _ in .json(#"{"error":"never"}"#, status: 401) }
        server.route("POST", "/refresh") { _ in .json(#"{"token":"fresh"}"#) }
        let session = TokenSession(token: "expired", refreshDelay: 0)
        await #expect(throws: YNetwork.NetworkError.unauthenticated) {
            let _: User = try await makeManager(server: server, sessionManager: session).submit(Me())
        }
        #expect(server.requests(path: "/me").map(\.bearerToken) == ["expired", "fresh"])
        #expect(server.requests(path: "/refresh").count == 1)
    }

    @Test("Without a session manager a 401 is unauthenticated at once; usesSession == false skips the session")
    func noSession() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        await #expect(throws: YNetwork.NetworkError.unauthenticated) {
            let _: User = try await makeManager(server: server).submit(Me())
        }
        struct Public: NetworkRequest {
            var path: PathRepresentable { "me" }
            var usesSession: Bool { false }
        }
        let session = TokenSession(token: "fresh")
        await #expect(throws: YNetwork.NetworkError.unauthenticated) {
            let _: User = try await makeManager(server: server, sessionManager: session).submit(Public())
        }
        #expect(server.requests(path: "/me").allSatisfy { $0.header("Authorization") == nil })
        #expect(server.requests(path: "/refresh").isEmpty)
    }

    @Test("A refresh that renews the session and hands out the same token: each later expiry refreshes again")
    func sameTokenRenewal() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let alive = Locked(false)
        server.route("GET", "/me") { request in
            request.bearerToken == "same" && alive.current
                ? .json(#"{"id":1,"name":"Ada"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        server.route("POST", "/refresh") { _ in
            alive.withLock { $0 = true }
            return .json(#"{"token":"same"}"#)
        }
        let session = TokenSession(token: "same", refreshDelay: 0)
        let manager = makeManager(
            server: server, sessionManager: session, refreshPolicy: SessionRefreshPolicy(maxRefreshes: 10, window: 60))
        for expiry in 1...3 {
            alive.withLock { $0 = false }
            let user: User = try await manager.submit(Me())
            #expect(user.name == "Ada")
            #expect(server.requests(path: "/refresh").count == expiry, "expiry \(expiry)")
        }
        #expect(server.requests(path: "/me").map(\.bearerToken) == Array(repeating: "same", count: 6))
    }

    @Test("A 401 held back past a failed refresh and a later renewal is retried, not failed for the old refresh")
    func lateUnauthorizedAfterRecovery() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let alive = Locked(false)
        let gate = DispatchSemaphore(value: 0)
        let slowCalls = Locked(0)
        server.route("GET", "/me") { request in
            request.bearerToken == "same" && alive.current
                ? .json(#"{"id":1,"name":"Ada"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        // The first call is answered 401 only when the test opens the gate: a request sent
        // before both refreshes whose answer arrives after them.
        server.route("GET", "/me/slow") { request in
            if slowCalls.withLock({ calls -> Int in
                calls += 1
                return calls
            }) == 1 {
                // Long: under ThreadSanitizer with the whole suite in parallel, the steps below
                // have taken over 30 s (starved), and a gate that opened early failed the test.
                _ = gate.wait(timeout: .now() + 180)
                return .json(#"{"error":"expired"}"#, status: 401)
            }
            return request.bearerToken == "same" && alive.current
                ? .json(#"{"id":1,"name":"Ada"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        let refreshCalls = Locked(0)
        server.route("POST", "/refresh") { _ in
            // The first refresh fails; the second renews the session and keeps the token.
            if refreshCalls.withLock({ calls -> Int in
                calls += 1
                return calls
            }) == 1 {
                return .json(#"{"error":"unavailable"}"#, status: 500)
            }
            alive.withLock { $0 = true }
            return .json(#"{"token":"same"}"#)
        }
        struct SlowMe: NetworkRequest {
            var path: PathRepresentable { "me/slow" }
        }
        let session = TokenSession(token: "same", refreshDelay: 0)
        let manager = makeManager(
            server: server, sessionManager: session, refreshPolicy: SessionRefreshPolicy(maxRefreshes: 10, window: 60))

        let held = Task { () throws -> User in try await manager.submit(SlowMe()) }
        // Alone this takes milliseconds; the suite under ThreadSanitizer once took over 20 s.
        let sentBy = Date().addingTimeInterval(120)
        while server.requests(path: "/me/slow").isEmpty, Date() < sentBy {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(server.requests(path: "/me/slow").count == 1)
        await #expect(throws: YNetwork.NetworkError.unauthenticated) {
            let _: User = try await manager.submit(Me())
        }
        let recovered: User = try await manager.submit(Me())
        #expect(recovered.name == "Ada")
        #expect(server.requests(path: "/refresh").count == 2)

        gate.signal()
        let late = try await held.value
        #expect(late.name == "Ada")
        #expect(server.requests(path: "/refresh").count == 2)
        #expect(server.requests(path: "/me/slow").map(\.bearerToken) == ["same", "same"])
    }

    /// A request whose path is an absolute URL.
    private struct Absolute: NetworkRequest {
        let url: String
        var path: PathRepresentable { url }
    }

    /// Two loopback servers (two origins) answering `GET /me`.
    private static func twoOrigins() throws -> (LoopbackServer, LoopbackServer) {
        let api = try LoopbackServer()
        let elsewhere = try LoopbackServer()
        for server in [api, elsewhere] {
            server.route("GET", "/me") { _ in .json(#"{"id":1,"name":"Ada"}"#) }
        }
        return (api, elsewhere)
    }

    /// `GET /me` by the base path, by an absolute URL to the base's origin, and by one to `elsewhere`.
    private static func getMe(
        with manager: NetworkManager, from api: LoopbackServer, _ elsewhere: LoopbackServer
    ) async throws {
        let _: User = try await manager.submit(Me())
        let _: User = try await manager.submit(Absolute(url: api.url("/me").absoluteString))
        let _: User = try await manager.submit(Absolute(url: elsewhere.url("/me").absoluteString))
    }

    /// `GET /me` under a base path of the request's own (an S3 bucket's, a partner API's).
    private struct OtherBase: NetworkRequest {
        let base: String
        var basePath: PathRepresentable? { base }
        var path: PathRepresentable { "me" }
    }

    @Test(
        "Session credentials go only to the configuration's base path's origin: an absolute path or a request's own base elsewhere gets none"
    )
    func credentialsStayWithOrigin() async throws {
        let (api, elsewhere) = try Self.twoOrigins()
        defer {
            api.shutdown()
            elsewhere.shutdown()
        }
        let manager = makeManager(server: api, sessionManager: TokenSession(token: "secret-token", refreshDelay: 0))

        try await Self.getMe(with: manager, from: api, elsewhere)
        // The configuration's other credential headers were already held back from such a
        // request; the session's went.
        let _: User = try await manager.submit(OtherBase(base: elsewhere.baseURL.absoluteString))
        // A request's own base at the configuration's origin is the same origin: it gets them.
        let _: User = try await manager.submit(OtherBase(base: api.baseURL.absoluteString))

        #expect(api.requests(path: "/me").map(\.bearerToken) == ["secret-token", "secret-token", "secret-token"])
        #expect(elsewhere.requests(path: "/me").count == 2)
        #expect(elsewhere.requests(path: "/me").allSatisfy { $0.header("Authorization") == nil })
    }

    @Test(
        "The configuration's credential headers go only to the base path's origin; its other headers go everywhere"
    )
    func configurationCredentialsStayWithOrigin() async throws {
        let (api, elsewhere) = try Self.twoOrigins()
        defer {
            api.shutdown()
            elsewhere.shutdown()
        }
        let manager = makeManager(
            server: api,
            headers: [
                "Authorization": "Bearer config-token", "X-Auth-Token": "config-key", "cookie": "sid=config",
                "X-Trace": "t-1",
            ])

        try await Self.getMe(with: manager, from: api, elsewhere)
        // A request whose own base path is elsewhere (an S3 bucket) gets none of them either.
        let _: User = try await manager.submit(OtherBase(base: elsewhere.baseURL.absoluteString))

        let atAPI = api.requests(path: "/me")
        #expect(atAPI.count == 2)
        #expect(atAPI.allSatisfy { $0.header("Authorization") == "Bearer config-token" })
        #expect(atAPI.allSatisfy { $0.header("X-Auth-Token") == "config-key" && $0.header("Cookie") == "sid=config" })
        let atOther = elsewhere.requests(path: "/me")
        #expect(atOther.count == 2)
        #expect(atOther.allSatisfy { $0.header("X-Trace") == "t-1" })
        #expect(
            atOther.allSatisfy {
                $0.header("Authorization") == nil && $0.header("X-Auth-Token") == nil && $0.header("Cookie") == nil
            })
    }

    @Test(
        "A transfer is judged by the base it was built with: reconfiguring meanwhile neither adds nor drops credentials"
    )
    func transferKeepsItsBase() async throws {
        let first = try makeServer()
        defer { first.shutdown() }
        let second = try makeServer()
        defer { second.shutdown() }
        let session = TokenSession(token: "fresh", refreshDelay: 0)
        let manager = makeManager(server: first, sessionManager: session)
        let result = await download(Me(), with: manager) {
            // Before the transfer's task runs: the manager now points at another origin.
            manager.configure(
                with: NetworkManagerConfiguration(
                    basePath: second.baseURL.absoluteString, networkEngine: URLNetworkEngine(transport: nil)),
                sessionManager: session)
        }
        #expect(try result.get() == Data(#"{"id":1,"name":"Ada"}"#.utf8))
        #expect(first.requests(path: "/me").map(\.bearerToken) == ["fresh"])
        #expect(second.requests(path: "/me").isEmpty)
    }

    @Test(
        "A server that rejects every fresh token: the loop guard stops after 3 refreshes in the window (a NaN or negative window is 60 s)",
        arguments: [60, -1, Double.nan])
    func loopGuard(window: Double) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let issued = Recorder<Int>()
        server.route("GET", "/me") { _ in .json(#"{"error":"never"}"#, status: 401) }
        server.route("POST", "/refresh") { _ in
            issued.append(1)
            return .json(#"{"token":"t\#(issued.values.count)"}"#)
        }
        let session = TokenSession(token: "expired", refreshDelay: 0)
        let manager = makeManager(
            server: server, sessionManager: session,
            refreshPolicy: SessionRefreshPolicy(maxRefreshes: 3, window: window))
        // Before: a NaN or negative window became 0, which forgot each refresh at once: 5 refreshes.
        for _ in 0..<5 {
            await #expect(throws: YNetwork.NetworkError.unauthenticated) {
                let _: User = try await manager.submit(Me())
            }
        }
        #expect(server.requests(path: "/refresh").count == 3)
        #expect(session.refreshes.values.count == 3)
        // 3 requests sent twice (refresh, retry), then 2 refused without a refresh or a retry.
        #expect(
            server.requests(path: "/me").map(\.bearerToken) == ["expired", "t1", "t1", "t2", "t2", "t3", "t3", "t3"])
    }

    @Test("A policy's settings are clamped when set as properties too, as in its initializer")
    func policyPropertiesClamped() {
        var policy = SessionRefreshPolicy()
        policy.timeout = .nan
        #expect(policy.timeout == 30)
        policy.timeout = .infinity
        #expect(policy.timeout == 86_400)
        policy.timeout = -5
        #expect(policy.timeout == 0)
        policy.window = .nan
        #expect(policy.window == 60)
        policy.maxRefreshes = 0
        #expect(policy.maxRefreshes == 1)
        policy.timeout = 2.5
        #expect(policy.timeout == 2.5)
    }

    @Test("A refresh whose own request gets a 401 fails at once: it does not wait for itself until the timeout")
    func refreshDoesNotWaitForItself() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { _ in .json(#"{"error":"expired"}"#, status: 401) }
        server.route("POST", "/refresh") { _ in .json(#"{"error":"invalid_client"}"#, status: 401) }
        let session = SelfAuthorizingRefreshSession()
        let manager = makeManager(
            server: server, sessionManager: session, refreshPolicy: SessionRefreshPolicy(timeout: 600))
        let started = Date()
        await #expect(throws: YNetwork.NetworkError.unauthenticated) {
            let _: User = try await manager.submit(Me())
        }
        // Before: the refresh's own 401 joined the refresh in flight, which waited for itself
        // until the timeout (600 s here). Loose: under ThreadSanitizer on a 2-core machine the
        // main group's tests end at a median of 90–130 s after they start (a bound of 100 s
        // against a 120 s timeout failed there).
        #expect(Date().timeIntervalSince(started) < 400, "\(Date().timeIntervalSince(started)) s")
        #expect(session.refreshes.values.count == 1)
        #expect(server.requests(path: "/refresh").count == 1)
    }

    @Test("A refresh that hangs fails every waiting request with unauthenticated within the refresh timeout")
    func hungRefresh() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        server.route("POST", "/refresh") { _ in
            LoopbackResponse.json(#"{"token":"fresh"}"#).with { $0.delayBeforeHeaders = 300 }
        }
        let session = TokenSession(token: "expired", refreshDelay: 0)
        // A refresh timeout of 5 s, long enough for its request to reach the server in a starved
        // run; requests time out after 600 s, so only the refresh timeout can end the wait
        // below the bound.
        let manager = makeManager(
            server: server, timeoutInterval: 600, sessionManager: session,
            refreshPolicy: SessionRefreshPolicy(timeout: 5))
        let started = Date()
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    do {
                        let _: User = try await manager.submit(Me())
                        return false
                    } catch {
                        return error as? YNetwork.NetworkError == .unauthenticated
                    }
                }
            }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(failures == 5)
        #expect(elapsed < 200, "took \(elapsed) s")  // far below the refresh's 300 s; a starved run is slow
        #expect(session.refreshes.values.count == 1)
        // (With a 0.5 s timeout, a starved run once timed out before the refresh's request was
        // sent, and none arrived.)
        #expect(server.requests(path: "/refresh").count == 1)
        #expect(server.requests(path: "/me").count == 5)
        #expect(server.requests(path: "/me").allSatisfy { $0.bearerToken == "expired" })
    }

    @Test("A 401 from another origin (after a redirect there) refreshes nothing: the session is not the problem")
    func foreign401RefreshesNothing() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        other.route("GET", "/x") { _ in .json(#"{"error":"who"}"#, status: 401) }
        let elsewhere = other.url("/x").absoluteString
        server.route("GET", "/go") { _ in .redirect(to: elsewhere) }
        struct Go: NetworkRequest {
            var path: PathRepresentable { "go" }
        }
        let session = TokenSession(token: "expired", refreshDelay: 0)
        let manager = makeManager(server: server, sessionManager: session)
        do {
            let _: User = try await manager.submit(Go())
            Issue.record("expected a failure")
        } catch {}
        #expect(session.refreshes.values.isEmpty, "refreshed \(session.refreshes.values.count) times")
        #expect(server.requests(path: "/refresh").isEmpty)
        #expect(other.requests(path: "/x").count == 1)
        #expect(other.requests(path: "/x").allSatisfy { $0.header("Authorization") == nil })
    }

    @Test("A chain that leaves the origin and comes back (A → B → A) ending in 401 refreshes nothing")
    func bounced401RefreshesNothing() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        let back = server.url("/back").absoluteString
        other.route("GET", "/x") { _ in .redirect(to: back) }
        server.route("GET", "/back") { request in
            request.header("Authorization") == nil ? .json(#"{"error":"who"}"#, status: 401) : .json("{}")
        }
        let elsewhere = other.url("/x").absoluteString
        server.route("GET", "/go") { _ in .redirect(to: elsewhere) }
        struct Go: NetworkRequest {
            var path: PathRepresentable { "go" }
        }
        let session = TokenSession(token: "expired", refreshDelay: 0)
        let manager = makeManager(server: server, sessionManager: session)
        do {
            let _: User = try await manager.submit(Go())
            Issue.record("expected a failure")
        } catch {}
        #expect(session.refreshes.values.isEmpty, "refreshed \(session.refreshes.values.count) times")
        #expect(server.requests(path: "/refresh").isEmpty)
        #expect(server.requests(path: "/back").count == 1)
        #expect(other.requests(path: "/x").allSatisfy { $0.header("Authorization") == nil })
    }

    @Test("A refresh that times out is cancelled: its task sees the cancellation, not only its waiters the failure")
    func timedOutRefreshIsCancelled() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let session = HangingSession()
        let manager = makeManager(
            server: server, sessionManager: session, refreshPolicy: SessionRefreshPolicy(timeout: 0.3))
        do {
            let _: User = try await manager.submit(Me())
            Issue.record("expected unauthenticated")
        } catch {
            #expect(error as? YNetwork.NetworkError == .unauthenticated)
        }
        // The refresh sleeps 300 s unless cancelled; cancelled, it records it at once (the wait
        // is long for a starved run, where trivial tests have taken 80-130 s).
        let deadline = Date().addingTimeInterval(250)
        while session.cancelled.values.isEmpty, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(session.cancelled.values == [true])
    }

    @Test("configure(with:) during a refresh fails its waiting requests at once (none waits forever) and cancels it")
    func reconfigureDuringRefresh() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let session = HangingSession()
        let manager = makeManager(
            server: server, sessionManager: session, refreshPolicy: SessionRefreshPolicy(timeout: 600))
        let outcomes = Recorder<Bool>()
        for _ in 0..<3 { submitExpectingUnauthenticated(manager, into: outcomes) }
        // Wait until the refresh runs and all three wait for it (under ThreadSanitizer, with the
        // whole suite starting at once, trivial tests took 80-97 s: 60 s was once not enough).
        let deadline = Date().addingTimeInterval(300)
        while session.started.values.isEmpty || manager.refreshWaiterCount < 3, Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(manager.refreshWaiterCount == 3)
        let reconfigured = Date()
        manager.configure(
            with: NetworkManagerConfiguration(
                basePath: server.baseURL.absoluteString, networkEngine: URLNetworkEngine()),
            sessionManager: nil)
        // Bounded, so that a regression fails here rather than hanging the run.
        while outcomes.values.count < 3, Date().timeIntervalSince(reconfigured) < 300 {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(
            outcomes.values == [true, true, true], "waiters still waiting after 300 s: \(3 - outcomes.values.count)")
        while session.cancelled.values.isEmpty, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(session.cancelled.values == [true])
        #expect(session.started.values.count == 1)
    }
    @Test(
        "configure(with:) called by the refresh itself leaves it running: its waiting requests are retried, none fails (Y-Network's configure never touched a refresh)"
    )
    func reconfigureInsideRefresh() async throws {
        let server = try makeServer()
        defer { server.shutdown() }
        // The refresh is answered only once the three first tries have arrived (up to 120 s), so
        // that all three wait for it when it reconfigures.
        server.route("POST", "/refresh") { [weak server] _ in
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, (server?.requests(path: "/me").count ?? 0) < 3 {
                Thread.sleep(forTimeInterval: 0.01)
            }
            return .json(#"{"token":"fresh"}"#)
        }
        let session = ReconfiguringSession(basePath: server.baseURL.absoluteString)
        let manager = makeManager(server: server, sessionManager: session)

        let users = try await withThrowingTaskGroup(of: User.self) { group in
            for _ in 0..<3 { group.addTask { try await manager.submit(Me()) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(users.count == 3)
        #expect(session.refreshes.values.count == 1)
        #expect(server.requests(path: "/refresh").count == 1)
        // The refresh's own request went out with the configuration it set.
        #expect(server.requests(path: "/refresh").first?.header("X-Session") == "renewed")
        let meRequests = server.requests(path: "/me")
        #expect(meRequests.filter { $0.bearerToken == "expired" }.count == 3)
        #expect(meRequests.filter { $0.bearerToken == "fresh" }.count == 3)
        // The retries went through the engine the refresh installed, as in Y-Network; the first
        // tries through the one they were built with.
        #expect(meRequests.filter { $0.bearerToken == "fresh" }.allSatisfy { $0.header("X-Engine") == "new" })
        #expect(meRequests.filter { $0.bearerToken == "expired" }.allSatisfy { $0.header("X-Engine") == nil })
        // Later requests use the new configuration and the refreshed token.
        let _: User = try await manager.submit(Me())
        #expect(server.requests(path: "/me").last?.header("X-Session") == "renewed")
        #expect(server.requests(path: "/me").last?.bearerToken == "fresh")
    }

    @Test(
        "configure(with:) from a task the refresh started, after that refresh ended, still cancels the refresh in flight and fails its waiters"
    )
    func reconfigureFromTaskOfEndedRefresh() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let accepting = Recorder<Bool>()
        server.route("GET", "/me") { request in
            accepting.values.isEmpty && request.bearerToken == "fresh"
                ? .json(#"{"id":1,"name":"Ada"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        let configuration = NetworkManagerConfiguration(
            basePath: server.baseURL.absoluteString, networkEngine: URLNetworkEngine(),
            sessionRefreshPolicy: SessionRefreshPolicy(timeout: 600))
        let session = LateReconfiguringSession(configuration: configuration)
        let manager = NetworkManager()
        manager.configure(with: configuration, sessionManager: session)

        // Refresh 1 succeeds; its task waits.
        let _: User = try await manager.submit(Me())
        // The server now refuses the fresh token: refresh 2 starts and hangs.
        accepting.append(false)
        let outcome = Recorder<Bool>()
        submitExpectingUnauthenticated(manager, into: outcome)
        _ = await eventually(within: 300) { !session.laterStarted.values.isEmpty && manager.refreshWaiterCount >= 1 }
        #expect(manager.refreshWaiterCount == 1)
        // The task of refresh 1 (which ended) configures now: a configure from outside refresh 2.
        session.release()
        _ = await eventually { !outcome.values.isEmpty }
        #expect(outcome.values == [true], "the waiter of refresh 2 still waits after 120 s")
        #expect(session.reconfigured.values == [1])
        _ = await eventually { !session.laterCancelled.values.isEmpty }
        #expect(session.laterCancelled.values == [true])
    }

    @Test(
        "A request retried after an outside configure(with:) goes out through the engine it was first sent with, not the new configuration's"
    )
    func retryAfterOutsideConfigureKeepsEngine() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let released = Recorder<Bool>()
        server.route("GET", "/me") { request in
            // The first try is held until the test has configured the manager anew.
            let deadline = Date().addingTimeInterval(120)
            while released.values.isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            return request.bearerToken == "t2"
                ? .json(#"{"id":1,"name":"Ada"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        let session = BearerSession(token: "t1")
        let manager = makeManager(server: server, sessionManager: session)
        let outcome = Recorder<Bool>()
        Task {
            let user: User? = try? await manager.submit(Me())
            outcome.append(user != nil)
        }
        _ = await eventually { !server.requests(path: "/me").isEmpty }
        // Another configuration, whose engine marks what it sends; the session's token changes.
        manager.configure(
            with: NetworkManagerConfiguration(
                basePath: server.baseURL.absoluteString,
                networkEngine: URLNetworkEngine(transport: EngineTaggingTransport())),
            sessionManager: session)
        session.set("t2")
        released.append(true)
        _ = await eventually { !outcome.values.isEmpty }

        #expect(outcome.values == [true])
        let sent = server.requests(path: "/me")
        #expect(sent.map(\.bearerToken) == ["t1", "t2"])
        #expect(
            sent.allSatisfy { $0.header("X-Engine") == nil }, "the retry went through the new configuration's engine")
    }

    @Test(
        "A task started by a refresh that submits after that refresh ended gets a refresh of its own on a 401, not an immediate failure"
    )
    func taskOfEndedRefreshRefreshes() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let accepted = Recorder<String>()
        accepted.append("fresh1")
        server.route("GET", "/me") { request in
            request.bearerToken == accepted.values.last
                ? .json(#"{"id":1,"name":"Ada"}"#) : .json(#"{"error":"expired"}"#, status: 401)
        }
        let session = LateSubmittingSession()
        let manager = makeManager(server: server, sessionManager: session)
        let _: User = try await manager.submit(Me())
        #expect(session.refreshes.values.count == 1)
        // `fresh1` expires; the refresh's task submits now.
        accepted.append("fresh2")
        session.release()
        _ = await eventually { !session.lateOutcome.values.isEmpty }

        #expect(session.lateOutcome.values == [true])
        #expect(session.refreshes.values.count == 2)
        #expect(server.requests(path: "/me").map(\.bearerToken) == ["expired", "fresh1", "fresh1", "fresh2"])
    }

    /// Submits `Me()` in a task of its own and records whether it failed with `unauthenticated`.
    private func submitExpectingUnauthenticated(_ manager: NetworkManager, into outcomes: Recorder<Bool>) {
        Task {
            do {
                let _: User = try await manager.submit(Me())
                outcomes.append(false)
            } catch {
                outcomes.append(error as? YNetwork.NetworkError == .unauthenticated)
            }
        }
    }
}

/// The default transport, marking each request `X-Engine: new` (to tell which engine sent it).
private struct EngineTaggingTransport: HTTPTransportProtocol {
    let inner = DefaultTransport.make()

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var tagged = request
        tagged.setValue("new", forHTTPHeaderField: "X-Engine")
        return try await inner.data(for: tagged)
    }
}

/// A session sending `Authorization: Bearer <token>` with a token that the test or a subclass's
/// refresh sets, and a gate a subclass's task can wait on; its own refresh fails.
private class BearerSession: SessionManager, @unchecked Sendable {
    // @unchecked: the mutable state is behind `lock`.
    private let lock = NSLock()
    private var token: String
    private var released = false

    init(token: String = "expired") {
        self.token = token
    }

    func set(_ token: String) {
        lock.withLock { self.token = token }
    }

    /// Opens the gate ``waitForRelease()`` waits on.
    func release() {
        lock.withLock { released = true }
    }

    func waitForRelease() async {
        while !lock.withLock({ released }) { try? await Task.sleep(nanoseconds: 10_000_000) }
    }

    func apply(_ request: inout URLRequest) {
        let token = lock.withLock { self.token }
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    }

    func refresh(networkManager: NetworkManager) async -> Bool { false }
}

/// A session that, like `TokenSession`, refreshes through `POST /refresh`, and on the way
/// configures its manager again (a new header, itself as the session manager), as an app that
/// keeps its configuration beside its session may do.
private final class ReconfiguringSession: BearerSession, @unchecked Sendable {
    let refreshes = Recorder<Int>()
    let basePath: String

    init(basePath: String) {
        self.basePath = basePath
        super.init()
    }

    struct Token: Decodable, Sendable {
        let token: String
    }

    override func refresh(networkManager: NetworkManager) async -> Bool {
        refreshes.append(1)
        // Configured only once the three first tries wait for this refresh (up to 120 s): a
        // starved run could otherwise build a first try with the new configuration.
        _ = await eventually { networkManager.refreshWaiterCount >= 3 }
        networkManager.configure(
            with: NetworkManagerConfiguration(
                basePath: basePath, headers: ["X-Session": "renewed"],
                networkEngine: URLNetworkEngine(transport: EngineTaggingTransport())),
            sessionManager: self)
        guard let fresh: Token = try? await networkManager.submit(TokenSession.Refresh()) else { return false }
        set(fresh.token)
        return true
    }
}

/// A session whose first refresh succeeds (`fresh`) and starts a task that configures the
/// manager later, when released (the task inherits the refresh's task-locals); every later
/// refresh hangs (300 s) unless cancelled.
private final class LateReconfiguringSession: BearerSession, @unchecked Sendable {
    let configuration: NetworkManagerConfiguration
    let refreshes = Recorder<Int>()
    let laterStarted = Recorder<Int>()
    let laterCancelled = Recorder<Bool>()
    let reconfigured = Recorder<Int>()

    init(configuration: NetworkManagerConfiguration) {
        self.configuration = configuration
        super.init()
    }

    override func refresh(networkManager: NetworkManager) async -> Bool {
        refreshes.append(1)
        let number = refreshes.values.count
        guard number == 1 else {
            laterStarted.append(number)
            try? await Task.sleep(nanoseconds: 300_000_000_000)
            laterCancelled.append(Task.isCancelled)
            return false
        }
        Task { [configuration] in
            await waitForRelease()
            networkManager.configure(with: configuration, sessionManager: self)
            reconfigured.append(1)
        }
        set("fresh")
        return true
    }
}

/// A session whose first refresh hands out `fresh1` and starts a task that, once released,
/// submits `Me()` and records whether it succeeded (the task keeps the refresh's task-locals);
/// its later refreshes hand out `fresh2`.
private final class LateSubmittingSession: BearerSession, @unchecked Sendable {
    let refreshes = Recorder<Int>()
    let lateOutcome = Recorder<Bool>()

    override func refresh(networkManager: NetworkManager) async -> Bool {
        refreshes.append(1)
        if refreshes.values.count == 1 {
            Task {
                await waitForRelease()
                let user: User? = try? await networkManager.submit(Me())
                lateOutcome.append(user != nil)
            }
            set("fresh1")
        } else {
            set("fresh2")
        }
        return true
    }
}

/// A session whose refresh hangs (300 s) unless cancelled, and records whether it was.
private final class HangingSession: SessionManager, Sendable {
    let started = Recorder<Int>()
    let cancelled = Recorder<Bool>()

    func apply(_ request: inout URLRequest) {
        request.setValue("Bearer expired", forHTTPHeaderField: "Authorization")
    }

    func refresh(networkManager: NetworkManager) async -> Bool {
        started.append(1)
        try? await Task.sleep(nanoseconds: 300_000_000_000)
        cancelled.append(Task.isCancelled)
        return false
    }
}
