import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@Suite("The README stack: Reauth(Retry(ETag(transport))) on every transport")
struct StackingTests {
    @Test("An expired token, a flaky server and a revalidation, all in one stack", arguments: TransportKind.all)
    func endToEnd(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let accepted = Locked("fresh")
        let flaky = Locked(0)
        server.route("POST", "/auth/refresh") { _ in
            accepted.withLock { $0 = "fresh" }
            return .json(#"{"token":"fresh"}"#)
        }
        server.route("GET", "/doc") { request in
            guard request.bearerToken == accepted.current else { return .status(401) }
            let attempt = flaky.increment()
            if attempt == 1 { return .status(503) }
            if request.header("If-None-Match") == "\"v1\"" {
                return LoopbackResponse.status(304).adding(header: "ETag", "\"v1\"")
            }
            return LoopbackResponse.json(#"{"id":1,"property":"doc"}"#).adding(header: "ETag", "\"v1\"")
        }

        let session = makeIsolatedSession()
        let auth = InMemoryAuthService(token: "expired")
        let clock = RecordingClock(randomUnit: 1)
        // Over CurlTransport the service's fast path (no HTTPURLResponse built for a 2xx it only
        // decodes) runs through all three decorators; over URLSessionTransport they wrap it.
        let stack = ReauthTransport(
            inner: RetryTransport(
                inner: ETagTransport(inner: try kind.make()),
                policy: RetryPolicy(baseDelay: 0.25), clock: clock.clock),
            authService: auth,
            refreshToken: {
                var refresh = URLRequest(url: server.url("/auth/refresh"))
                refresh.httpMethod = "POST"
                _ = try await URLSessionTransport(session: session).data(for: refresh)
                try await auth.saveAccessToken("fresh")
            })
        let service = HTTPNetworkService(transport: stack, authService: auth)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let endpoint = Endpoint(path: "/doc", method: .get, requiresAuth: true)

        let first: Model = try await service.request(to: endpoint, via: environment)
        let second: Model = try await service.request(to: endpoint, via: environment)
        #expect(first == second)
        // A response served from the entry is built when asked for: the stored status and headers.
        let (third, response): (Model, HTTPURLResponse) = try await service.requestWithResponse(
            to: endpoint, via: environment)
        #expect(third == first)
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")

        let seen = server.requests(path: "/doc").map { "\($0.bearerToken ?? "-") \($0.header("If-None-Match") ?? "-")" }
        #expect(
            seen == [
                "expired -",  // 401: Reauth refreshes once
                "fresh -",  // 503: Retry backs off
                "fresh -",  // 200 with ETag: stored
                "fresh \"v1\"",  // 304: ETag returns the cached body
                "fresh \"v1\"",  // 304 again, for requestWithResponse
            ])
        #expect(server.requests(path: "/auth/refresh").count == 1)
        #expect(clock.recordedDelays == [0.25])
    }
}
