import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@Suite("ReauthTransport refresh timeout")
struct ReauthRefreshTimeoutTests {
    /// What the refresh closure does: hang (until cancelled) or save a new token.
    enum RefreshMode: Sendable { case hang, succeed }

    @Test("A hung refresh fails all 5 waiters with refreshTimedOut, is cancelled, and a later 401 refreshes again")
    func hungRefresh() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let arrived = Locked(0)
        server.route("GET", "/data") { request in
            if request.bearerToken == "new" { return .json(#"{"ok":true}"#) }
            // Hold each 401 until all 5 first requests are in, so they all join one refresh.
            arrived.withLock { $0 += 1 }
            let deadline = Date().addingTimeInterval(120)
            while arrived.current < 5 && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
            return .status(401)
        }
        let auth = InMemoryAuthService(token: "old")
        let mode = Locked(RefreshMode.hang)
        let refreshCancelled = Locked(false)
        let reauth = ReauthTransport(
            inner: URLSessionTransport(session: makeIsolatedSession()), authService: auth,
            // 20 s: every 401 joins the refresh before it times out, even in a starved run (at
            // 0.5 s a late one would start a second refresh).
            policy: ReauthPolicy(refreshTimeout: 20)
        ) {
            switch mode.current {
            case .hang:
                do {
                    try await Task.sleep(nanoseconds: 3_600 * 1_000_000_000)
                } catch {
                    refreshCancelled.withLock { $0 = true }
                    throw error
                }
            case .succeed:
                try await auth.saveAccessToken("new")
            }
        }
        let service = HTTPNetworkService(transport: reauth, authService: auth)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let endpoint = Endpoint(path: "/data", method: .get, requiresAuth: true)

        let start = Date()
        let codes = await withTaskGroup(of: ReauthError.Code?.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    do {
                        try await service.requestVoid(to: endpoint, via: environment)
                        return nil
                    } catch let error as NetworkError {
                        #expect(error.kind == .httpStatusError(.unauthorized))
                        return (error.underlyingError as? ReauthError)?.code
                    } catch {
                        return nil
                    }
                }
            }
            var codes: [ReauthError.Code?] = []
            for await code in group { codes.append(code) }
            return codes
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(codes == Array(repeating: .refreshTimedOut, count: 5))
        // The refresh never ends; a starved run is slow (131 s once under ThreadSanitizer on a
        // 2-core machine, where that group's tests end at a median of 90–130 s after they start).
        #expect(elapsed < 400, "the waiters were held for \(elapsed) s")
        #expect(reauth.refreshCount == 1)
        #expect(server.requests(path: "/data").count == 5, "each request reached the server once, no retry")

        for _ in 0..<20_000 where !refreshCancelled.current { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(refreshCancelled.current, "the timed-out refresh task is cancelled")

        // The coordinator was reset: the next 401 starts a new refresh, which now succeeds.
        mode.withLock { $0 = .succeed }
        try await service.requestVoid(to: endpoint, via: environment)
        #expect(reauth.refreshCount == 2)
        #expect(
            server.requests(path: "/data").map { $0.bearerToken } == ["old", "old", "old", "old", "old", "old", "new"])
    }

    @Test("Unusable timeouts never trap: non-finite or non-positive mean 30 s, huge means one day")
    func clamping() {
        for value in [Double.nan, .infinity, -.infinity, 0, -1, -.greatestFiniteMagnitude] {
            #expect(ReauthPolicy(refreshTimeout: value).refreshTimeout == 30)
        }
        #expect(ReauthPolicy(refreshTimeout: .greatestFiniteMagnitude).refreshTimeout == 86_400)
        #expect(ReauthPolicy(refreshTimeout: 0.2).refreshTimeout == 0.2)
        #expect(ReauthPolicy().refreshTimeout == ReauthPolicy.defaultRefreshTimeout)
        var policy = ReauthPolicy()
        policy.refreshTimeout = .nan
        #expect(policy.refreshTimeout == 30)
    }

    @Test("An injected sleep fires the timeout without waiting; a refresh that finishes first cancels the timer")
    func injectedSleep() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/data") { request in
            request.bearerToken == "new" ? .json("{}") : .status(401)
        }
        let sleeps = Locked<[TimeInterval]>([])
        let hung = ReauthTransport(
            inner: URLSessionTransport(session: makeIsolatedSession()), authService: InMemoryAuthService(token: "old"),
            policy: ReauthPolicy(refreshTimeout: 120, sleep: { seconds in sleeps.withLock { $0.append(seconds) } })
        ) {
            try await Task.sleep(nanoseconds: 3_600 * 1_000_000_000)
        }
        let error = await #expect(throws: TransportError.self) { try await hung.data(for: Self.request(server)) }
        #expect(error?.code == .authenticationFailed)
        #expect(error?.response?.statusCode == 401, "the 401 as received is attached")
        #expect((error?.underlyingError as? ReauthError)?.code == .refreshTimedOut)
        #expect(sleeps.current == [120])

        let auth = InMemoryAuthService(token: "old")
        let timerCancelled = Locked(false)
        let quick = ReauthTransport(
            inner: URLSessionTransport(session: makeIsolatedSession()), authService: auth,
            policy: ReauthPolicy(sleep: { _ in
                do {
                    try await Task.sleep(nanoseconds: 3_600 * 1_000_000_000)
                } catch {
                    timerCancelled.withLock { $0 = true }
                    throw error
                }
            })
        ) {
            try await auth.saveAccessToken("new")
        }
        let (_, response) = try await quick.data(for: Self.request(server))
        #expect(response.statusCode == 200)
        for _ in 0..<20_000 where !timerCancelled.current { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(timerCancelled.current, "the timer of a finished refresh does not linger")
    }

    static func request(_ server: LoopbackServer) -> URLRequest {
        var request = URLRequest(url: server.url("/data"))
        request.setValue("Bearer old", forHTTPHeaderField: "Authorization")
        return request
    }
}
