import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// What `HTTPNetworkService()` and `ReauthTransport { … }` do with every argument defaulted, as
/// the original GentleNetworking's did: their default transport retries.
@Suite("The defaults retry, as the original's did")
struct ServiceDefaultsWireTests {
    static let model = #"{"id":1,"property":"ok"}"#

    @Test("HTTPNetworkService(): a GET answered 503 then 200 is sent twice and succeeds; a POST is sent once")
    func serviceDefaultRetriesIdempotentOnly() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let busy = LoopbackResponse.status(503).adding(header: "Retry-After", "0")
        server.route("GET", "/flaky", handler: LoopbackServer.sequence([busy, .json(Self.model)]))
        server.route("POST", "/flaky", handler: LoopbackServer.sequence([busy, .json(Self.model)]))
        let service = HTTPNetworkService(authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)

        let model: Model = try await service.request(to: Endpoint(path: "/flaky", method: .get), via: environment)
        #expect(model.property == "ok")
        #expect(server.requests(path: "/flaky").filter { $0.method == "GET" }.count == 2)

        await #expect(throws: NetworkError.self) {
            let _: Model = try await service.request(
                to: Endpoint(path: "/flaky", method: .post, body: ["a": EndpointAnyEncodable(1)]), via: environment)
        }
        #expect(server.requests(path: "/flaky").filter { $0.method == "POST" }.count == 1, "never replayed")
    }

    @Test("ReauthTransport { … }: its inner transport retries a 503 too")
    func reauthDefaultInnerRetries() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let busy = LoopbackResponse.status(503).adding(header: "Retry-After", "0")
        server.route("GET", "/flaky", handler: LoopbackServer.sequence([busy, .json(Self.model)]))
        let auth = InMemoryAuthService(token: "t")
        let transport = ReauthTransport(authService: auth) { try await auth.saveAccessToken("t2") }
        #expect(transport.inner is RetryTransport)
        let (data, response) = try await transport.data(for: URLRequest(url: server.url("/flaky")))
        #expect(response.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == Self.model)
        #expect(server.requests(path: "/flaky").count == 2)
    }
}
