import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Header fields a decorator adds beside the request (``ETagTransport``'s `If-None-Match`)
/// reach the wire exactly as if the request carried them, on every transport.
@Suite("Fields added beside a request")
struct FieldAddingTransportTests {
    /// Every transport kind: the pass-down path (CurlTransport, PinningTransport over it) and the
    /// copy path (URLSessionTransport).
    static var transports: [String] {
        #if canImport(CCurl)
            ["curl", "pinning", "urlsession"]
        #else
            ["urlsession"]
        #endif
    }

    func transport(_ kind: String) throws -> any HTTPTransportProtocol {
        switch kind {
        #if canImport(CCurl)
            case "curl": return try CurlTransport()
            case "pinning": return PinningTransport(pinnedDomains: [:])
        #endif
        default: return URLSessionTransport()
        }
    }

    @Test(
        "An added field is sent, replaces the request's own of any case, and follows a redirect", arguments: transports)
    func sentAndReplacing(kind: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/moved") { _ in .redirect(to: "/target") }
        server.route("GET", "/target") { _ in .text("ok") }
        let transport = try transport(kind)
        var request = URLRequest(url: server.url("/moved"))
        request.setValue("\"stale\"", forHTTPHeaderField: "if-none-match")
        request.setValue("kept", forHTTPHeaderField: "X-Own")
        let (data, response) = try await InnerTransport(transport).deferredExchange(
            request, adding: [("If-None-Match", "\"e1\"")])
        #expect(response.statusCode == 200)
        #expect(data == Data("ok".utf8))
        let seen = server.receivedRequests
        #expect(seen.map(\.path) == ["/moved", "/target"])
        for hop in seen {
            #expect(hop.headerValues("If-None-Match") == ["\"e1\""], "\(hop.path)")
            #expect(hop.header("X-Own") == "kept")
        }
        // The caller's request is untouched.
        #expect(request.value(forHTTPHeaderField: "If-None-Match") == "\"stale\"")
    }

    @Test("An added field with CR or LF is refused before anything is sent", arguments: transports)
    func refusesInjection(kind: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/x") { _ in .text("ok") }
        let transport = try transport(kind)
        await #expect {
            _ = try await InnerTransport(transport).deferredExchange(
                URLRequest(url: server.url("/x")), adding: [("If-None-Match", "\"a\"\r\nX-Injected: 1")])
        } throws: { error in
            (error as? TransportError)?.code == .invalidRequest
        }
        #expect(server.receivedRequests.isEmpty)
    }
}
