import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport`'s redirect hop check, which `PinningTransport` sets on Apple platforms so
/// that a redirect to a pinned host over plain `http` is refused as the first request is. The
/// session code that runs it is shared; here it runs over corelibs, on the wire.
@Suite("URLSessionTransport: a redirect hop to a pinned host over http is refused")
struct RedirectHopCheckTests {
    /// A transport whose hop check is `PinningTransport`'s, with `127.0.0.1` pinned.
    func pinnedTransport() -> URLSessionTransport {
        let pinned: Set<String> = [PinnedHost.key("127.0.0.1")]
        return URLSessionTransport(session: makeIsolatedSession(), redirectApprover: nil) { url in
            PinningTransport.cleartextRefusal(for: url, pinnedHosts: pinned)
        }
    }

    @Test("A 302 and a 307 to the pinned host over http: .invalidRequest, and the target is never asked")
    func refusedOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let target = "http://127.0.0.1:\(server.port)/target"
        server.route("GET", "/found") { _ in .redirect(to: target) }
        server.route("POST", "/temporary") { _ in .redirect(to: target, status: 307) }
        server.route("GET", "/target") { _ in .json("{}") }
        server.route("POST", "/target") { _ in .json("{}") }
        // The first request goes to `localhost`, which is not pinned.
        let start = "http://localhost:\(server.port)"
        let transport = pinnedTransport()

        for (method, path) in [("GET", "/found"), ("POST", "/temporary")] {
            var request = URLRequest(url: try #require(URL(string: start + path)))
            request.httpMethod = method
            if method == "POST" { request.httpBody = Data("a=1".utf8) }
            do {
                _ = try await transport.data(for: request)
                Issue.record("\(method) \(path): the hop to the pinned host must be refused")
            } catch let error as TransportError {
                #expect(error.code == .invalidRequest, "\(method) \(path): \(error)")
                #expect(error.message.contains("is pinned"), "\(error.message)")
            }
        }
        #expect(server.requests(path: "/found").count == 1)
        #expect(server.requests(path: "/temporary").count == 1)
        #expect(server.requests(path: "/target").isEmpty, "nothing reached the pinned host in clear")
    }

    @Test("The check refuses plain http to a pinned host in any spelling, and nothing else")
    func refusalRule() throws {
        let pinned: Set<String> = [PinnedHost.key("api.example.com"), PinnedHost.key("::1")]
        func refused(_ text: String) throws -> Bool {
            PinningTransport.cleartextRefusal(for: try #require(URL(string: text)), pinnedHosts: pinned) != nil
        }
        #expect(try refused("http://api.example.com/a"))
        #expect(try refused("HTTP://API.Example.COM/a"))
        #expect(try refused("http://[0::1]:8080/a"))
        #expect(try !refused("https://api.example.com/a"))
        #expect(try !refused("http://other.example.com/a"))
        #expect(try !refused("http://[::2]/a"))
    }

    @Test("Without a hop check the same redirect is followed (the control)")
    func followedWithoutCheck() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/found") { _ in .redirect(to: "http://127.0.0.1:\(server.port)/target") }
        server.route("GET", "/target") { _ in .json("{}") }
        let (_, response) = try await URLSessionTransport(session: makeIsolatedSession()).data(
            for: URLRequest(url: try #require(URL(string: "http://localhost:\(server.port)/found"))))
        #expect(response.statusCode == 200)
        #expect(server.requests(path: "/target").count == 1)
    }
}
