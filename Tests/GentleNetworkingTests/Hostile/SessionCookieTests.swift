import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if !canImport(Darwin)
    /// corelibs' URLSession parses each `Set-Cookie` in its libcurl header callback, before any
    /// delegate sees the response, and its parser traps on a cookie name made of several Unicode
    /// scalars: one header from any server ended the process on every `URLSession`-based path
    /// that accepts cookies (the default). A routed session stores cookies itself
    /// (`SessionCookieJar`); the trap cases run in a `gentle-probe` child.
    @Suite("Set-Cookie on URLSessionTransport (Linux)", .serialized)
    struct SessionCookieTests {
        @Test(
            "A Set-Cookie name corelibs' parser traps on is a 200, the cookie not stored",
            arguments: ["\u{1F1FA}\u{1F1F8}=1", "x\u{301}y=1", "ok=1, \u{1F1FA}\u{1F1F8}=2"])
        func trappingCookie(field: String) async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/c") { _ in LoopbackResponse(headers: [("Set-Cookie", field)], body: Data("ok".utf8)) }
            let outcome = try await SessionTimeoutProbeTests.probe("transport-cookies", server.url("/c"), seconds: "60")
            #expect(outcome.outcome == "success" && outcome.status == 200, "\(outcome)")
            #expect(server.requests(path: "/c").count == 1)
        }

        @Test("A valid cookie is still stored and sent back, from a redirect hop too")
        func validCookieKept() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let name = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/hop") { _ in
                LoopbackResponse(status: 302, headers: [("Location", "/set"), ("Set-Cookie", "\(name)hop=h; Path=/")])
            }
            server.route("GET", "/set") { _ in
                // A cookie that cannot be stored beside it (a byte outside ASCII) drops only itself.
                LoopbackResponse(
                    headers: [("Set-Cookie", "\(name)bad=Jos\u{E9}; Path=/"), ("Set-Cookie", "\(name)=v1; Path=/")],
                    body: Data("ok".utf8))
            }
            server.route("GET", "/echo") { _ in .text("ok") }
            let transport = URLSessionTransport(session: URLSession(configuration: .default))
            _ = try await transport.data(for: URLRequest(url: server.url("/hop")))
            _ = try await transport.data(for: URLRequest(url: server.url("/echo")))
            let cookie = server.requests(path: "/echo").first?.header("Cookie") ?? ""
            #expect(cookie.contains("\(name)=v1") && cookie.contains("\(name)hop=h"), "\(cookie)")
        }

        @Test("A 3xx that is not followed (no Location) stores its cookies too", arguments: [300, 302, 303])
        func unfollowedRedirectCookie(status: Int) async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let name = "gn\(UInt32.random(in: 0...UInt32.max))"
            // corelibs reports such a 3xx only when its transfer ends, to no delegate callback.
            server.route("GET", "/bare") { _ in
                LoopbackResponse(
                    status: status, headers: [("Set-Cookie", "\(name)=bare; Path=/")], body: Data("b".utf8))
            }
            server.route("GET", "/echo") { _ in .text("ok") }
            let transport = URLSessionTransport(session: URLSession(configuration: .default))
            let (_, response) = try await transport.data(for: URLRequest(url: server.url("/bare")))
            #expect(response.statusCode == status)
            _ = try await transport.data(for: URLRequest(url: server.url("/echo")))
            let cookie = server.requests(path: "/echo").first?.header("Cookie") ?? ""
            #expect(cookie.contains("\(name)=bare"), "\(cookie)")
        }

        @Test("A session whose policy is .never stores nothing")
        func neverPolicy() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let name = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/set") { _ in
                LoopbackResponse(headers: [("Set-Cookie", "\(name)=v1; Path=/")], body: Data("ok".utf8))
            }
            server.route("GET", "/echo") { _ in .text("ok") }
            let configuration = URLSessionConfiguration.default
            configuration.httpCookieAcceptPolicy = .never
            let transport = URLSessionTransport(session: URLSession(configuration: configuration))
            _ = try await transport.data(for: URLRequest(url: server.url("/set")))
            _ = try await transport.data(for: URLRequest(url: server.url("/echo")))
            let cookie = server.requests(path: "/echo").first?.header("Cookie") ?? ""
            #expect(!cookie.contains(name), "\(cookie)")
        }
    }
#endif
