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
        // The refresh fails only after all ten requests have reached the server (and 0.5 s more
        // for their 401s to join it): a 401 arriving after the failure would rightly start a
        // second refresh, as under ThreadSanitizer on a loaded machine it once did.
        let api = try AuthAPI(refreshDelay: 0.5, refreshStatus: 500, refreshAfterDataRequests: 10)
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

    @Test("A 401 for a request sent with an older token is retried with the current one, no refresh")
    func olderTokenRace() async throws {
        let api = try AuthAPI()
        defer { api.server.shutdown() }
        let stack = makeStack(api, token: "t1")  // the app already holds the current token
        var stale = URLRequest(url: api.server.url("/data"))
        stale.setValue("Bearer t0", forHTTPHeaderField: "Authorization")  // built before it was saved
        let (_, response) = try await stack.reauth.data(for: stale)
        #expect(response.statusCode == 200)
        #expect(api.refreshCount == 0)
        #expect(api.dataRequests.map(\.bearerToken) == ["t0", "t1"])
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
        let api = try AuthAPI(refreshDelay: 6)
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
        #expect(Date().timeIntervalSince(cancelledAt) < 4, "well before the 6 s refresh ends")
        let deadline = Date().addingTimeInterval(20)
        while try await stack.auth.loadAccessToken() != "t2", Date() < deadline {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(try await stack.auth.loadAccessToken() == "t2")
    }
}
