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

    @Test(
        "After a 302 turned a POST into a GET, a later 307 to another host keeps the GET: the body is not sent again",
        arguments: TransportKind.all)
    func chainedRedirectKeepsTheHopsMethod(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/login") { _ in .redirect(to: "/b", status: 302) }
        server.route(nil, "/b") { _ in .redirect(to: "http://localhost:\(server.port)/c", status: 307) }
        server.route(nil, "/c") { request in .text("\(request.method) \(request.body.count)") }
        let transport = try kind.make()
        var request = URLRequest(url: server.url("/login"))
        request.httpMethod = "POST"
        request.httpBody = Data("password=hunter2".utf8)

        let (answer, response) = try await transport.data(for: request)

        #expect(String(decoding: answer, as: UTF8.self) == "GET 0")
        #expect(response.url?.path == "/c")
        let landed = server.requests(path: "/c")
        #expect(landed.map(\.method) == ["GET"])
        #expect(landed.allSatisfy { $0.body.isEmpty })
        #expect(server.requests(path: "/b").map(\.method) == ["GET"])
    }

    @Test(
        "A relative Location (`next`, `?p=2`) is resolved against the redirecting URL (RFC 3986), body kept on 307",
        arguments: TransportKind.all)
    func relativeLocation(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/dir/a") { request in
            request.rawQuery == nil ? .redirect(to: "next", status: 307) : .text("a \(request.rawQuery ?? "")")
        }
        server.route(nil, "/dir/next") { request in .text("\(request.method) \(request.body.count)") }
        server.route(nil, "/dir/q") { request in
            request.rawQuery == nil ? .redirect(to: "?p=2", status: 302) : .text("q \(request.rawQuery ?? "")")
        }
        let transport = try kind.make()
        var post = URLRequest(url: server.url("/dir/a"))
        post.httpMethod = "POST"
        post.httpBody = Data(repeating: 0x62, count: 4_096)

        let (answer, response) = try await transport.data(for: post)
        #expect(String(decoding: answer, as: UTF8.self) == "POST 4096")
        #expect(response.url?.path == "/dir/next")
        #expect(server.requests(path: "/next").isEmpty)

        let (queried, queriedResponse) = try await transport.data(for: URLRequest(url: server.url("/dir/q")))
        #expect(String(decoding: queried, as: UTF8.self) == "q p=2")
        #expect(queriedResponse.url?.path == "/dir/q")
        #expect(server.requests(path: "/").isEmpty)
    }

    @Test(
        "A redirect loop makes stream(for:) itself throw .tooManyRedirects, not return the 3xx",
        arguments: TransportKind.all)
    func streamRedirectLoop(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/a") { _ in .redirect(to: "/b") }
        server.route(nil, "/b") { _ in .redirect(to: "/a") }
        let transport = try kind.make()
        do {
            let (_, response) = try await transport.stream(for: URLRequest(url: server.url("/a")))
            Issue.record("stream(for:) returned \(response.statusCode) for a redirect loop")
        } catch let error as TransportError {
            #expect(error.code == .tooManyRedirects)
        }
        #expect(server.receivedRequests.count <= 3)
    }

    @Test(
        "Post/Redirect/Get to the same URL is one hop, not a loop; the same method at the same URL again is",
        arguments: TransportKind.all)
    func postRedirectGetSameURL(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/form") { _ in LoopbackResponse(status: 303, headers: [("Location", "/form")]) }
        server.route("GET", "/form") { _ in .text("done") }
        server.route(nil, "/loop") { _ in LoopbackResponse(status: 303, headers: [("Location", "/loop")]) }
        let transport = try kind.make()
        var post = URLRequest(url: server.url("/form"))
        post.httpMethod = "POST"
        post.httpBody = Data("a=1".utf8)
        let (body, response) = try await transport.data(for: post)
        #expect(response.statusCode == 200 && body == Data("done".utf8))
        #expect(server.requests(path: "/form").map(\.method) == ["POST", "GET"])
        var loop = URLRequest(url: server.url("/loop"))
        loop.httpMethod = "POST"
        do {
            let (_, response) = try await transport.data(for: loop)
            Issue.record("a 303 loop returned \(response.statusCode)")
        } catch let error as TransportError {
            #expect(error.code == .tooManyRedirects)
        }
        #expect(server.requests(path: "/loop").map(\.method) == ["POST", "GET"])
    }

    @Test(
        "A 3xx with no Location is the response on both transports, with its status (URLSession's was .badResponse)",
        arguments: TransportKind.all)
    func redirectWithoutLocation(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        for status in [301, 302, 303, 307, 308] {
            server.route("GET", "/s\(status)") { _ in LoopbackResponse(status: status, body: Data("hi".utf8)) }
        }
        let transport = try kind.make()
        for status in [301, 302, 303, 307, 308] {
            let (_, response) = try await transport.data(for: URLRequest(url: server.url("/s\(status)")))
            #expect(response.statusCode == status)
            let (stream, head) = try await transport.stream(for: URLRequest(url: server.url("/s\(status)")))
            #expect(head.statusCode == status)
            stream.cancel()
        }
    }
}
