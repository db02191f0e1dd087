import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("MatchingTransport")
struct MatchingTransportTests {
    @Test("Forwards a matching request and refuses others before they reach the inner transport")
    func forwardsOnlyMatches() async throws {
        let inner = CannedResponseTransport(string: "ok")
        let transport = MatchingTransport(pattern: RequestPattern(method: .get, path: "/allowed"), transport: inner)
        #expect(transport.pattern == RequestPattern(method: .get, path: "/allowed"))
        let (data, _) = try await transport.data(for: request("GET", "https://h.example/allowed"))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        await #expect(throws: MatchingTransport.MatchingTransportError.notMatched) {
            try await transport.data(for: request("POST", "https://h.example/allowed"))
        }
        do {
            _ = try await transport.data(for: request("GET", "https://h.example/other"))
            Issue.record("expected notMatched")
        } catch MatchingTransportError.notMatched {
            // The short name catches it too.
        }
        #expect(inner.receivedRequests.map { $0.url?.path } == ["/allowed"])
    }

    @Test("On the wire: a matching request reaches the server, a refused one never does")
    func onTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/ok") { _ in .text("served") }
        server.route("GET", "/secret") { _ in .text("leaked") }
        let transport = MatchingTransport(
            pattern: RequestPattern(method: .get, path: "/ok"),
            transport: URLSessionTransport(session: makeIsolatedSession()))
        let (data, response) = try await transport.data(for: URLRequest(url: server.url("/ok")))
        #expect(response.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "served")
        await #expect(throws: MatchingTransportError.notMatched) {
            try await transport.data(for: URLRequest(url: server.url("/secret")))
        }
        #expect(server.receivedRequests.map(\.path) == ["/ok"])
    }

    @Test(
        "A stream is the inner transport's own: the first bytes arrive before the body ends, a refused one sends nothing",
        arguments: TransportKind.all)
    func streams(kind: TransportKind) async throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        // 600 bytes, one every 100 ms: read whole first (the protocol's default), they came as
        // one chunk (of 20, when the drip was 2 s long: a starved client could miss that).
        server.route("/drip", .drip(body: Data(repeating: UInt8(ascii: "x"), count: 600), interval: 0.1))
        let transport = MatchingTransport(
            pattern: RequestPattern(method: .get, path: "/drip"), transport: try kind.make())
        let (body, response) = try await transport.stream(for: URLRequest(url: server.url("/drip")))
        #expect(response.statusCode == 200)
        var first = 0
        for try await chunk in body where !chunk.isEmpty {
            first = chunk.count
            break
        }
        body.cancel()
        #expect(first > 0 && first < 600, "first chunk: \(first) bytes")
        await #expect(throws: MatchingTransportError.notMatched) {
            try await transport.stream(for: URLRequest(url: server.url("/other")))
        }
        #expect(server.requests(path: "/other").isEmpty)
    }
}
