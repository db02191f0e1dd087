import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a response head ends, on the wire: a chunked body's trailers never become the head
/// (not even one written as a status line), and a line of spaces is not the blank line.
@Suite("The end of a response head, against a hostile server")
struct HeadBoundaryTests {
    /// The transports a chunked body's trailers can be sent to. Not `URLSessionTransport` on
    /// Linux: corelibs parses trailers as a new response head and then traps ("Transfer
    /// completed, but there's no response") on any trailer field, taking the process down
    /// (SECURITY.md, "Known limits"); CurlTransport is the default there.
    static let trailerSafe: [TransportKind] = {
        #if canImport(FoundationNetworking)
            return TransportKind.all.filter { $0 != .urlSession }
        #else
            return TransportKind.all
        #endif
    }()

    @Test(
        "Trailers written as a status line and a Location neither replace the 200 nor send a second request",
        arguments: trailerSafe)
    func statusLineTrailer(kind: TransportKind) async throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        let reply =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n2\r\nok\r\n0\r\n"
            + "HTTP/1.1 302 Found:\r\nLocation: /elsewhere\r\n\r\n"
        server.route("/t", .raw(Data(reply.utf8)))
        let transport = try kind.make()
        let (body, response) = try await transport.data(for: URLRequest(url: server.url("/t")))
        #expect(response.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self) == "ok")
        #expect(response.value(forHTTPHeaderField: "Location") == nil)
        #expect(server.requests(path: "/elsewhere").isEmpty)
    }

    @Test(
        "A line of only spaces does not end the head: the Transfer-Encoding after it meets Content-Length (.badResponse)",
        arguments: TransportKind.all)
    func whitespaceLine(kind: TransportKind) async throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        let reply =
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n \r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
        server.route("/w", .raw(Data(reply.utf8)))
        let transport = try kind.make()
        do {
            let (body, response) = try await transport.data(for: URLRequest(url: server.url("/w")))
            Issue.record("got \(response.statusCode) with \(body.count) bytes")
        } catch let error as TransportError {
            #expect(error.code == .badResponse, "\(error)")
        }
    }
}
