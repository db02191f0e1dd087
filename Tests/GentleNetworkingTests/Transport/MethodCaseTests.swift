import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A caller's method casing, as seen on the wire, on every transport. corelibs uppercases the
/// usual methods when they are set on a `URLRequest` (`post`, `get`, `head`, `put`, `delete`),
/// not the others (`patch`, `options`): both transports must send the same token for the same
/// request.
@Suite("Method casing on the wire, on every transport")
struct MethodCaseTests {
    @Test("A lowercase method goes out uppercased, with its body", arguments: TransportKind.all)
    func lowercaseMethods(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/echo") { request in .text("\(request.method) \(request.body.count)") }
        let transport = try makeHostileTransport(kind)

        var patch = URLRequest(url: server.url("/echo"))
        patch.httpMethod = "patch"
        patch.httpBody = Data("hello".utf8)
        let (patched, _) = try await transport.data(for: patch)
        #expect(patched == Data("PATCH 5".utf8))

        var options = URLRequest(url: server.url("/echo"))
        options.httpMethod = "Options"
        let (answered, _) = try await transport.data(for: options)
        #expect(answered == Data("OPTIONS 0".utf8))

        #expect(server.receivedRequests.map(\.method) == ["PATCH", "OPTIONS"])
        #expect(server.requests(path: "/echo").first?.body == Data("hello".utf8))
    }

    @Test("uppercasedMethod uppercases what has a lowercase letter, keeps the rest, and defaults to GET")
    func uppercased() {
        #expect(RequestValidator.uppercasedMethod(nil) == "GET")
        #expect(RequestValidator.uppercasedMethod("GET") == "GET")
        #expect(RequestValidator.uppercasedMethod("M-SEARCH") == "M-SEARCH")
        #expect(RequestValidator.uppercasedMethod("post") == "POST")
        #expect(RequestValidator.uppercasedMethod("Patch") == "PATCH")
        // Not a token, and uppercasing must not make it one (ß uppercases to SS).
        #expect(RequestValidator.uppercasedMethod("getß") == "getß")
        #expect(!RequestValidator.isValidMethod(RequestValidator.uppercasedMethod("getß")))
    }
}
