import Foundation
import GentleNetworkingTesting
import JustNetworking
import Testing

/// The seed's public names that our own API spells differently: `HTTPMethod.value`,
/// `Router.method`, `BaseRequest` and `identity` as a function value.
@Suite("JustNetworking 1.x names")
struct SeedNameTests {
    @Test("HTTPMethod.value is the token sent on the wire", arguments: JustNetworking.HTTPMethod.allCases)
    func methodValue(method: JustNetworking.HTTPMethod) {
        #expect(method.value == method.rawValue)
    }

    @Test("Router.method is the route's method")
    func routerMethod() throws {
        let base = try #require(URL(string: "https://h.example"))
        #expect(FixedBaseRouter(base, "a", .patch).method == .patch)
        #expect(FixedBaseRouter(base, "a").method == .get)
    }

    @Test("identity is usable both as a builder and as a function")
    func identityBothWays() throws {
        let request = URLRequest(url: try #require(URL(string: "https://h.example/x")))
        let builder: RequestBuilder = identity
        #expect(identity(request) == request)
        #expect(builder(request) == request)
    }

    @Test("A BaseRequest decodes on the wire and calls back on its queue", arguments: RequesterKind.allCases)
    func baseRequestOnTheWire(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/users/5") { _ in .json(#"{"id":"5","name":"Zoë"}"#) }
        let marked = MarkedQueue()
        let request = BaseRequest<User>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "users/5")))

        let delivery = await deliver(request, via: kind.make(), checking: marked)
        #expect(delivery.value == User(id: "5", name: "Zoë"))
        #expect(delivery.onResponseQueue)
        #expect(server.receivedRequests.first?.method == "GET")
    }
}
