import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a redirect does to a request's method and body, as the server sees it, on every
/// transport (RFC 9110 §15.4): 303 turns anything but HEAD into a GET without a body; 301 and
/// 302 turn a POST into a GET; 307 and 308 keep the method and send the whole body again.
@Suite("Redirects and the request body, on every transport")
struct RedirectBodyTests {
    @Test("Each redirect status keeps or drops the method and body as RFC 9110 says", arguments: TransportKind.all)
    func methodAndBody(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        for status in [301, 302, 303, 307, 308] {
            server.route(nil, "/\(status)") { _ in .redirect(to: "/landing", status: status) }
        }
        server.route(nil, "/landing") { request in .text("\(request.method) \(request.body.count)") }
        let transport = try kind.make()
        let body = Data(repeating: 0x61, count: 4_096)
        let expected: [(method: String, status: Int, landing: String)] = [
            ("POST", 301, "GET 0"), ("POST", 302, "GET 0"), ("POST", 303, "GET 0"), ("POST", 307, "POST 4096"),
            ("POST", 308, "POST 4096"), ("PUT", 301, "PUT 4096"), ("PUT", 303, "GET 0"), ("PUT", 307, "PUT 4096"),
        ]
        for (method, status, landing) in expected {
            for streamed in [false, true] {
                var request = URLRequest(url: server.url("/\(status)"))
                request.httpMethod = method
                if streamed { request.httpBodyStream = InputStream(data: body) } else { request.httpBody = body }
                let (answer, response) = try await transport.data(for: request)
                let label = "\(method) \(status)\(streamed ? " (stream)" : "")"
                #expect(String(decoding: answer, as: UTF8.self) == landing, "\(label)")
                #expect(response.url?.path == "/landing", "\(label)")
            }
        }
    }
}
