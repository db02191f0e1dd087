import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@Suite("ReauthTransport on the wire")
struct ReauthTransportTests {
    struct Stack {
        let api: AuthAPI
        let auth: InMemoryAuthService
        let reauth: ReauthTransport
        let service: HTTPNetworkService
    }

    func makeStack(_ api: AuthAPI, token: String = "t0", policy: ReauthPolicy = ReauthPolicy()) -> Stack {
        let session = makeIsolatedSession()
        let auth = InMemoryAuthService(token: token)
        let reauth = ReauthTransport(
            inner: URLSessionTransport(session: session), authService: auth, policy: policy,
            refreshToken: api.refreshClosure(saving: auth, session: session))
        return Stack(
            api: api, auth: auth, reauth: reauth, service: HTTPNetworkService(transport: reauth, authService: auth))
    }

    let data = Endpoint(path: "/data", method: .get, requiresAuth: true)

    @Test("100 concurrent 401s share exactly 1 refresh; repeated 20 times")
    func hundredConcurrentOneRefresh() async throws {
        for round in 1...20 {
            let api = try AuthAPI()
            defer { api.server.shutdown() }
            let stack = makeStack(api)
            let environment = api.environment
            let service = stack.service
            let endpoint = data
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let model: Model = try await service.request(to: endpoint, via: environment)
                        return model.property
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(tokens.count == 100, "round \(round)")
            #expect(Set(tokens) == ["t2"], "every request ended with the refreshed token (round \(round))")
            #expect(api.refreshCount == 1, "round \(round): the server saw \(api.refreshCount) refreshes")
            #expect(stack.reauth.refreshCount == 1)
            let rejected = api.dataRequests.filter { $0.bearerToken == "t0" }.count
            #expect(rejected >= 1 && api.dataRequests.count == 100 + rejected, "each 401 was retried exactly once")
        }
    }

    @Test("A slow refresh while new requests keep arriving still refreshes once")
    func slowRefreshWithArrivals() async throws {
        let api = try AuthAPI(refreshDelay: 0.4)
        defer { api.server.shutdown() }
        let stack = makeStack(api)
        let environment = api.environment
        let service = stack.service
        let endpoint = data
        try await withThrowingTaskGroup(of: Void.self) { group in
            for wave in 0..<5 {
                for _ in 0..<8 {
                    group.addTask {
                        let _: Model = try await service.request(to: endpoint, via: environment)
                    }
                }
                try await Task.sleep(nanoseconds: UInt64(wave) * 100_000_000)
            }
            try await group.waitForAll()
        }
        #expect(api.refreshCount == 1)
        #expect(api.dataRequests.filter { $0.bearerToken == "t2" }.count == 40)
    }

    @Test("A failed refresh fails every waiter with 401 and the refresh error attached")
    func failedRefresh() async throws {
        // The refresh fails only after all ten requests have reached the server (and 10 s more
        // for their 401s to join it): a 401 arriving after the failure would rightly start a
        // second refresh, as under ThreadSanitizer on a loaded machine it once did (with 0.5 s).
        let api = try AuthAPI(refreshDelay: 10, refreshStatus: 500, refreshAfterDataRequests: 10)
        defer { api.server.shutdown() }
        let stack = makeStack(api)
        let environment = api.environment
        let service = stack.service
        let endpoint = data
        let errors = await withTaskGroup(of: (any Error)?.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        try await service.requestVoid(to: endpoint, via: environment)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await group.reduce(into: [(any Error)?]()) { $0.append($1) }
        }
        #expect(errors.count == 10)
        for error in errors {
            let networkError = try #require(error as? NetworkError)
            #expect(networkError.kind == .httpStatusError(.unauthorized))
            #expect(networkError.response?.bodyText == #"{"error":"token expired"}"#)
            let reauthError = try #require(networkError.underlyingError as? ReauthError)
            #expect(reauthError.code == .refreshFailed)
            #expect((reauthError.underlyingError as? NetworkError)?.kind == .httpStatusError(.internalServerError))
        }
        #expect(api.refreshCount == 1)
        #expect(api.dataRequests.count == 10, "nothing was retried after the failed refresh")
    }

    @Test("Below the service, a failed refresh is a TransportError carrying the 401 and the ReauthError")
    func failedRefreshIsTransportError() async throws {
        let api = try AuthAPI(refreshStatus: 500)
        defer { api.server.shutdown() }
        let stack = makeStack(api)
        var request = URLRequest(url: api.server.url("/data"))
        request.setValue("Bearer t0", forHTTPHeaderField: "Authorization")
        let error = await #expect(throws: TransportError.self) { try await stack.reauth.data(for: request) }
        #expect(error?.code == .authenticationFailed)
        #expect(error?.response?.statusCode == 401)
        #expect(error?.response?.bodyText == #"{"error":"token expired"}"#)
        #expect((error?.underlyingError as? ReauthError)?.code == .refreshFailed)
        #expect(api.refreshCount == 1)
        #expect(api.dataRequests.count == 1, "nothing was retried after the failed refresh")
    }

    @Test(
        "A 401 for the service's credential that the app replaced in flight is retried with the current one, no refresh"
    )
    func olderTokenRace() async throws {
        let api = try AuthAPI()
        defer { api.server.shutdown() }
        let stack = makeStack(api, token: "t0")
        // The service adds `t0`; the app saves `t1` (a new login) before the request goes out.
        let replacing = ReplacingTransport(inner: stack.reauth) { try await stack.auth.saveAccessToken("t1") }
        let service = HTTPNetworkService(transport: replacing, authService: stack.auth)
        let body = try await service.requestData(to: data, via: DefaultAPIEnvironment(baseURL: api.server.baseURL))
        #expect(body.response.statusCode == 200)
        #expect(api.refreshCount == 0)
        #expect(api.dataRequests.map(\.bearerToken) == ["t0", "t1"])
    }

    @Test("A 401 for a credential the caller set (not the auth service's) is returned as it is: no retry, no refresh")
    func callersOwnToken() async throws {
        let api = try AuthAPI()
        defer { api.server.shutdown() }
        let stack = makeStack(api, token: "t1")
        var own = URLRequest(url: api.server.url("/data"))
        own.setValue("Bearer t0", forHTTPHeaderField: "Authorization")
        let (_, response) = try await stack.reauth.data(for: own)
        #expect(response.statusCode == 401)
        #expect(api.refreshCount == 0)
        #expect(api.dataRequests.map(\.bearerToken) == ["t0"])
    }

    @Test(
        "stream(for:): that 401 comes back with its body readable (the stream read for the check was returned, cancelled)"
    )
    func callersOwnTokenStream() async throws {
        let api = try AuthAPI()
        defer { api.server.shutdown() }
        let stack = makeStack(api, token: "t1")
        var own = URLRequest(url: api.server.url("/data"))
        own.setValue("Bearer t0", forHTTPHeaderField: "Authorization")
        let (expected, _) = try await stack.reauth.data(for: own)
        let (stream, response) = try await stack.reauth.stream(for: own)
        #expect(response.statusCode == 401)
        let body = try await stream.collect(maxBytes: 1 << 20)
        #expect(!body.isEmpty && body == expected, "\(String(decoding: body, as: UTF8.self))")
        #expect(api.refreshCount == 0)
        #expect(api.dataRequests.map(\.bearerToken) == ["t0", "t0"])
    }

    @Test("A refresh that renews the session and keeps the token: each later expiry refreshes again")
    func sameTokenRenewal() async throws {
        let api = try AuthAPI(keepsToken: true)
        defer { api.server.shutdown() }
        let stack = makeStack(api, token: "t1", policy: ReauthPolicy(maxRefreshes: 10))
        for expiry in 1...3 {
            api.expireSession()
            let model: Model = try await stack.service.request(to: data, via: api.environment)
            #expect(model.property == "t1")
            #expect(api.refreshCount == expiry, "expiry \(expiry): the server saw \(api.refreshCount) refreshes")
        }
        // Each expiry: a 401, the refresh, the retry that succeeds.
        #expect(api.dataRequests.map(\.bearerToken) == Array(repeating: "t1", count: 6))
        #expect(api.dataRequests.count == 6)
    }

    @Test("Concurrent 401s with a token the refresh hands out again: one refresh, every request retried once")
    func sameTokenConcurrent() async throws {
        let api = try AuthAPI(refreshAfterDataRequests: 20, keepsToken: true)
        defer { api.server.shutdown() }
        let stack = makeStack(api, token: "t1")
        let environment = api.environment
        let service = stack.service
        let endpoint = data
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let model: Model = try await service.request(to: endpoint, via: environment)
                    return model.property
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens == Array(repeating: "t1", count: 20))
        #expect(api.refreshCount == 1)
        #expect(api.dataRequests.count == 40, "each 401 was retried exactly once")
    }

    @Test("401s to requests sent before a same-token renewal that arrive after it: retried, no second refresh")
    func sameTokenLate401s() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let alive = Locked(false)
        server.route("GET", "/data") { [weak server] request in
            if alive.current { return .json(#"{"id":1,"property":"t1"}"#) }
            // The first request's 401 starts the refresh at once; the others were sent before the
            // renewal and are answered (401, their session was not alive) only well after it.
            if let server, server.requests(path: "/data").count > 1 {
                let deadline = Date().addingTimeInterval(30)
                while !alive.current, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
                Thread.sleep(forTimeInterval: 0.5)
            }
            return .json(#"{"error":"expired"}"#, status: 401)
        }
        server.route("POST", "/auth/refresh") { _ in
            alive.withLock { $0 = true }
            return .json(#"{"token":"t1"}"#)
        }
        let session = makeIsolatedSession()
        let auth = InMemoryAuthService(token: "t1")
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let reauth = ReauthTransport(
            inner: URLSessionTransport(session: session), authService: auth, policy: ReauthPolicy(maxRefreshes: 10)
        ) {
            struct TokenResponse: Decodable { let token: String }
            let plain = HTTPNetworkService(transport: URLSessionTransport(session: session))
            let response: TokenResponse = try await plain.request(
                to: Endpoint(path: "/auth/refresh", method: .post), via: environment)
            try await auth.saveAccessToken(response.token)
        }
        let service = HTTPNetworkService(transport: reauth, authService: auth)
        let endpoint = data
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let model: Model = try await service.request(to: endpoint, via: environment)
                    return model.property
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens == Array(repeating: "t1", count: 4))
        #expect(server.requests(path: "/auth/refresh").count == 1, "the late 401s started no refresh of their own")
        #expect(server.requests(path: "/data").count == 8, "each 401 was retried exactly once")
    }

    @Test("A second 401 is returned as is, and the loop guard stops repeated refreshes")
    func secondUnauthorizedAndLoopGuard() async throws {
        let api = try AuthAPI(acceptsAnyToken: false)
        defer { api.server.shutdown() }
        let now = Date(timeIntervalSince1970: 1000)
        let stack = makeStack(api, policy: ReauthPolicy(maxRefreshes: 2, window: 60, now: { now }))
        for expectedRefreshes in 1...2 {
            await #expect {
                try await stack.service.requestVoid(to: data, via: api.environment)
            } throws: { error in
                (error as? NetworkError)?.kind == .httpStatusError(.unauthorized)
                    && (error as? NetworkError)?.underlyingError == nil
            }
            #expect(api.refreshCount == expectedRefreshes)
            #expect(api.dataRequests.count == expectedRefreshes * 2, "one retry per refresh, then the 401 as is")
        }
        await #expect {
            try await stack.service.requestVoid(to: data, via: api.environment)
        } throws: { error in
            ((error as? NetworkError)?.underlyingError as? ReauthError)?.code == .refreshLimitExceeded
        }
        #expect(api.refreshCount == 2)
        #expect(api.dataRequests.count == 5)
    }

    @Test("A 401 for a request without credentials is returned without refreshing")
    func noCredentials() async throws {
        let api = try AuthAPI()
        defer { api.server.shutdown() }
        let stack = makeStack(api)
        await #expect(throws: NetworkError.self) {
            try await stack.service.requestVoid(to: Endpoint(path: "/data", method: .get), via: api.environment)
        }
        #expect(api.refreshCount == 0)
        #expect(api.dataRequests.count == 1)
    }

    @Test("Cancelling a caller that waits for a slow refresh returns at once; the refresh still completes")
    func cancelWhileWaiting() async throws {
        // A refresh of 20 s, so a starved run's stalls (seconds) stay far below it (and below
        // the isolated session's 30 s timeout, which the refresh's own request is under).
        let api = try AuthAPI(refreshDelay: 20)
        defer { api.server.shutdown() }
        let stack = makeStack(api)
        let environment = api.environment
        let service = stack.service
        let endpoint = data
        let waiter = Task { try await service.requestVoid(to: endpoint, via: environment) }
        while api.refreshCount == 0 { try await Task.sleep(nanoseconds: 5_000_000) }
        let cancelledAt = Date()
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(Date().timeIntervalSince(cancelledAt) < 15, "well before the 20 s refresh ends")
        let deadline = Date().addingTimeInterval(300)
        while try await stack.auth.loadAccessToken() != "t2", Date() < deadline {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(try await stack.auth.loadAccessToken() == "t2")
    }
}

/// Runs `beforeSending` before passing each request on: a test's way to change the app's state
/// between the service preparing a request and the transport sending it.
private struct ReplacingTransport: HTTPTransportProtocol {
    let inner: any HTTPTransportProtocol
    let beforeSending: @Sendable () async throws -> Void

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await beforeSending()
        return try await inner.data(for: request)
    }
}
