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
    /// The transports a chunked body's trailers, or a head cut short, can be sent to. Not
    /// `URLSessionTransport` on Linux: corelibs parses trailers as a new response head, and then,
    /// as on a connection closed inside the head, traps ("Transfer completed, but there's no
    /// response"), taking the process down (SECURITY.md, "Known limits"); CurlTransport is the
    /// default there.
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

    @Test(
        "A connection closed inside the head is .connectionLost, not a 200 with no body (libcurl ends it without an error)",
        arguments: trailerSafe)
    func headCutShort(kind: TransportKind) async throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/cut", .raw(Data("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n".utf8)))
        server.route("/cut-redirect", .raw(Data("HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\n".utf8)))
        let transport = try kind.make()
        for path in ["/cut", "/cut-redirect"] {
            var request = URLRequest(url: server.url(path))
            request.httpMethod = "POST"
            request.httpBody = Data("order=1".utf8)
            do {
                let (body, response) = try await transport.data(for: request)
                Issue.record("\(path): got \(response.statusCode) with \(body.count) bytes")
            } catch let error as TransportError {
                #expect(error.code == .connectionLost, "\(path): \(error)")
            }
        }
        #expect(server.requests(path: "/elsewhere").isEmpty)
    }

    @Test(
        "The same kind on every transport: a connection closed before any byte is .connectionLost, a NUL in a header .badResponse",
        arguments: TransportKind.all)
    func emptyReplyAndNul(kind: TransportKind) async throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/empty", .raw(Data()))
        server.route("/nul", .raw(Data("HTTP/1.1 200 OK\r\nX-A: a\u{0}b\r\nContent-Length: 2\r\n\r\nok".utf8)))
        let transport = try kind.make()
        for (path, expected) in [("/empty", TransportError.Code.connectionLost), ("/nul", .badResponse)] {
            do {
                let (body, response) = try await transport.data(for: URLRequest(url: server.url(path)))
                Issue.record("\(path): got \(response.statusCode) with \(body.count) bytes")
            } catch let error as TransportError {
                #expect(error.code == expected, "\(path): \(error)")
            }
        }
    }
}
