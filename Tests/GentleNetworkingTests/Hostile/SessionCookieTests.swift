import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

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

        /// A transport over an ephemeral configuration that accepts cookies, and its storage
        /// (corelibs shares one among ephemeral configurations, and cannot make another without
        /// a file: each test's cookies carry a random prefix, and only those are looked at).
        private static func transportAndStorage() throws -> (URLSessionTransport, HTTPCookieStorage) {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.httpCookieAcceptPolicy = .always
            let storage = try #require(configuration.httpCookieStorage)
            return (URLSessionTransport(session: URLSession(configuration: configuration)), storage)
        }

        /// Removes the cookies a test stored: their names start with its `prefix`.
        private static func removeCookies(prefixed prefix: String, from storage: HTTPCookieStorage) {
            for made in storage.cookies ?? [] where made.name.hasPrefix(prefix) { storage.deleteCookie(made) }
        }

        /// The names in a `Cookie` field that start with `prefix`, in order, without it.
        private static func names(in field: String?, prefix: String) -> [String] {
            (field ?? "").split(separator: ";").compactMap { pair in
                let name = pair.split(separator: "=").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                return name.hasPrefix(prefix) ? String(name.dropFirst(prefix.count)) : nil
            }
        }

        @Test("Storing follows RFC 6265: no Domain above an IP address, no Secure cookie from http, Max-Age honoured")
        func storageRules() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/set") { _ in
                LoopbackResponse(
                    headers: [
                        // corelibs stored it as `.0.0.1` and sent it to every host ending so.
                        ("Set-Cookie", "\(p)parent=1; Domain=0.0.1; Path=/"),
                        ("Set-Cookie", "\(p)exact=2; Domain=127.0.0.1; Path=/"),
                        ("Set-Cookie", "\(p)plain=3; Path=/"),
                        // From http, a Secure cookie could replace the https one.
                        ("Set-Cookie", "\(p)secure=4; Path=/; Secure"),
                        ("Set-Cookie", "\(p)gone=5; Path=/"),
                        ("Set-Cookie", "\(p)aged=6; Path=/; Max-Age=3600"),
                    ], body: Data("ok".utf8))
            }
            server.route("GET", "/delete") { _ in
                // corelibs ignores Max-Age: a logout's `Max-Age=0` left the cookie in place.
                LoopbackResponse(headers: [("Set-Cookie", "\(p)gone=; Path=/; Max-Age=0")], body: Data("ok".utf8))
            }
            server.route("GET", "/echo") { _ in .text("ok") }
            let (transport, storage) = try Self.transportAndStorage()
            func stored() -> [HTTPCookie] { (storage.cookies ?? []).filter { $0.name.hasPrefix(p) } }
            _ = try await transport.data(for: URLRequest(url: server.url("/set")))
            let names = Set(stored().map { String($0.name.dropFirst(p.count)) })
            #expect(names == ["exact", "plain", "gone", "aged"], "\(names)")
            let aged = stored().first { $0.name == "\(p)aged" }?.expiresDate?.timeIntervalSinceNow ?? 0
            #expect(aged > 3000 && aged <= 3600, "\(aged)")
            _ = try await transport.data(for: URLRequest(url: server.url("/delete")))
            #expect(!stored().contains { $0.name == "\(p)gone" })
            _ = try await transport.data(for: URLRequest(url: server.url("/echo")))
            let sent = Self.names(in: server.requests(path: "/echo").first?.header("Cookie"), prefix: p)
            #expect(Set(sent) == ["exact", "plain", "aged"], "\(sent)")
            for made in stored() { storage.deleteCookie(made) }
        }

        @Test(
            "Sending follows RFC 6265: Secure only over https, the Path, no expired cookie, after the caller's own Cookie"
        )
        func sendingRules() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/api/orders") { _ in .text("ok") }
            server.route("GET", "/apiary") { _ in .text("ok") }
            let (transport, storage) = try Self.transportAndStorage()
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            func cookie(_ name: String, path: String = "/", secure: Bool = false, expires: Date? = nil) -> HTTPCookie? {
                var properties: [HTTPCookiePropertyKey: Any] = [
                    .name: p + name, .value: "v", .domain: "127.0.0.1", .path: path,
                ]
                if secure { properties[.secure] = "TRUE" }
                if let expires { properties[.expires] = expires }
                return HTTPCookie(properties: properties)
            }
            // corelibs sent each of these by host alone. It drops an expired cookie only when
            // storing one: this one expires while stored.
            for made in [
                cookie("root"), cookie("api", path: "/api"), cookie("secure", secure: true),
                cookie("other", path: "/other"), cookie("expired", expires: Date(timeIntervalSinceNow: 1)),
            ] {
                storage.setCookie(try #require(made))
            }
            try await Task.sleep(nanoseconds: 1_200_000_000)
            var request = URLRequest(url: server.url("/api/orders"))
            request.setValue("own=1", forHTTPHeaderField: "Cookie")
            _ = try await transport.data(for: request)
            _ = try await transport.data(for: URLRequest(url: server.url("/apiary")))
            let orders = server.requests(path: "/api/orders").first?.header("Cookie")
            #expect(orders?.hasPrefix("own=1; ") == true, "\(orders ?? "none")")
            // Longer paths first; `/api` does not path-match `/apiary`.
            #expect(Self.names(in: orders, prefix: p) == ["api", "root"], "\(orders ?? "none")")
            #expect(Self.names(in: server.requests(path: "/apiary").first?.header("Cookie"), prefix: p) == ["root"])
            Self.removeCookies(prefixed: p, from: storage)
        }

        @Test("A Path ending in / matches that path; plain http neither replaces nor deletes a Secure cookie")
        func trailingSlashAndSecureKept() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/app/") { _ in .text("ok") }
            server.route("GET", "/replace") { _ in
                LoopbackResponse(headers: [("Set-Cookie", "\(p)token=evil; Path=/")], body: Data("ok".utf8))
            }
            server.route("GET", "/delete") { _ in
                LoopbackResponse(headers: [("Set-Cookie", "\(p)token=; Path=/; Max-Age=0")], body: Data("ok".utf8))
            }
            let (transport, storage) = try Self.transportAndStorage()
            let app = try #require(
                HTTPCookie(properties: [.name: p + "app", .value: "v", .domain: "127.0.0.1", .path: "/app/"]))
            let token = try #require(
                HTTPCookie(properties: [
                    .name: p + "token", .value: "good", .domain: "127.0.0.1", .path: "/", .secure: "TRUE",
                ]))
            storage.setCookie(app)
            storage.setCookie(token)
            defer { Self.removeCookies(prefixed: p, from: storage) }
            // `URL.path` is `/app` for `/app/`: the cookie for `/app/` was not sent to it.
            _ = try await transport.data(for: URLRequest(url: server.url("/app/")))
            #expect(Self.names(in: server.requests(path: "/app/").first?.header("Cookie"), prefix: p) == ["app"])
            // Over http: the Secure cookie stays, neither replaced nor deleted.
            _ = try await transport.data(for: URLRequest(url: server.url("/replace")))
            _ = try await transport.data(for: URLRequest(url: server.url("/delete")))
            let kept = (storage.cookies ?? []).filter { $0.name == p + "token" }
            #expect(kept.count == 1 && kept.first?.value == "good" && kept.first?.isSecure == true, "\(kept)")
        }

        @Test("Plain http cannot shadow a Secure cookie with a longer path; other names are kept")
        func secureNotShadowed() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/sub/set") { _ in
                LoopbackResponse(
                    headers: [
                        // Sent first to /sub (longer path), it would stand in for the Secure one.
                        ("Set-Cookie", "\(p)token=evil; Path=/sub"),
                        ("Set-Cookie", "\(p)other=1; Path=/sub"),
                    ], body: Data("ok".utf8))
            }
            server.route("GET", "/sub/x") { _ in .text("ok") }
            let (transport, storage) = try Self.transportAndStorage()
            let token = try #require(
                HTTPCookie(properties: [
                    .name: p + "token", .value: "good", .domain: "127.0.0.1", .path: "/", .secure: "TRUE",
                ]))
            storage.setCookie(token)
            defer { Self.removeCookies(prefixed: p, from: storage) }
            _ = try await transport.data(for: URLRequest(url: server.url("/sub/set")))
            let stored = (storage.cookies ?? []).filter { $0.name.hasPrefix(p) }
            #expect(stored.filter { $0.name == p + "token" }.map(\.value) == ["good"], "\(stored)")
            #expect(stored.contains { $0.name == p + "other" && $0.path == "/sub" }, "\(stored)")
            // Over http the Secure one is not sent, and no impostor is.
            _ = try await transport.data(for: URLRequest(url: server.url("/sub/x")))
            #expect(Self.names(in: server.requests(path: "/sub/x").first?.header("Cookie"), prefix: p) == ["other"])
            // The rule's domain test, both ways round.
            #expect(SessionCookieJar.domainsOverlap(".example.com", "api.example.com"))
            #expect(SessionCookieJar.domainsOverlap("api.example.com", ".example.com"))
            #expect(!SessionCookieJar.domainsOverlap("example.com", "badexample.com"))
            #expect(!SessionCookieJar.domainsOverlap(".0.0.1", "10.0.0.1"))
        }

        @Test("A Domain that is the host and a public suffix makes a host-only cookie")
        func publicSuffixHostIsHostOnly() throws {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieAcceptPolicy = .always
            let storage = try #require(configuration.httpCookieStorage)
            let jar = SessionCookieJar(configuration)
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            let url = try #require(URL(string: "https://s3.amazonaws.com/bucket"))
            let response = try #require(
                HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: ["Set-Cookie": "\(p)s=1; Domain=s3.amazonaws.com; Path=/"]))
            jar.store(from: response)
            let stored = (storage.cookies ?? []).filter { $0.name == p + "s" }
            defer { for made in stored { storage.deleteCookie(made) } }
            // Stored as `.s3.amazonaws.com`, it was sent to every bucket's host.
            #expect(stored.map(\.domain) == ["s3.amazonaws.com"])
            #expect(
                jar.cookieField(for: try #require(URL(string: "https://other.s3.amazonaws.com/")))?.contains(p) != true)
        }

        /// A jar over a fresh ephemeral configuration that accepts cookies, and its storage.
        private static func jarAndStorage() throws -> (SessionCookieJar, HTTPCookieStorage) {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieAcceptPolicy = .always
            return (SessionCookieJar(configuration), try #require(configuration.httpCookieStorage))
        }

        private static func response(_ url: String, setting field: String) throws -> HTTPURLResponse {
            let url = try #require(URL(string: url))
            return try #require(
                HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Set-Cookie": field])
            )
        }

        @Test(
            "A Secure cookie stays Secure (and HttpOnly) when the jar rescopes it: never sent over http",
            arguments: [
                // No Path: rescoped to the request's directory.
                ("https://example.com/login/x", "Secure; HttpOnly", "/login/"),
                // A Max-Age: rebuilt with its expiry.
                ("https://example.com/login/x", "Path=/; Secure; Max-Age=3600", "/"),
                // A Domain that is the host and a public suffix: made host-only.
                ("https://s3.amazonaws.com/b", "Domain=s3.amazonaws.com; Path=/; Secure; HttpOnly", "/"),
            ])
        func secureSurvivesRescoping(url: String, attributes: String, path: String) throws {
            let (jar, storage) = try Self.jarAndStorage()
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            jar.store(from: try Self.response(url, setting: "\(p)sid=abc; \(attributes)"))
            let stored = (storage.cookies ?? []).filter { $0.name == p + "sid" }
            defer { for made in stored { storage.deleteCookie(made) } }
            #expect(stored.count == 1 && stored.first?.isSecure == true, "\(stored)")
            #expect(stored.first?.isHTTPOnly == attributes.contains("HttpOnly"))
            let host = try #require(URL(string: url)?.host)
            #expect(jar.cookieField(for: try #require(URL(string: "https://\(host)\(path)")))?.contains(p) == true)
            #expect(jar.cookieField(for: try #require(URL(string: "http://\(host)\(path)")))?.contains(p) != true)
        }

        @Test("__Secure- and __Host- names are stored only when the cookie keeps what they promise")
        func namePrefixes() throws {
            let (jar, storage) = try Self.jarAndStorage()
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            defer {
                for made in storage.cookies ?? [] where made.name.contains(p) { storage.deleteCookie(made) }
            }
            let cases: [(url: String, field: String, kept: Bool)] = [
                ("https://api.example.com/", "__Secure-\(p)a=1; Secure; Path=/", true),
                ("https://api.example.com/", "__Secure-\(p)b=1; Path=/", false),
                ("http://api.example.com/", "__secure-\(p)c=1; Secure; Path=/", false),
                ("https://api.example.com/", "__Host-\(p)d=1; Secure; Path=/", true),
                // From a sibling host, for the parent domain: session fixation of api's cookie.
                ("https://evil.example.com/", "__Host-\(p)e=1; Secure; Path=/; Domain=example.com", false),
                ("https://api.example.com/", "__Host-\(p)f=1; Secure; Path=/app", false),
                ("https://api.example.com/app/x", "__HOST-\(p)g=1; Secure", false),
                ("https://api.example.com/", "__Host-\(p)h=1; Path=/", false),
            ]
            for (url, field, kept) in cases {
                jar.store(from: try Self.response(url, setting: field))
                let name = String(field.prefix { $0 != "=" })
                #expect((storage.cookies ?? []).contains { $0.name == name } == kept, "\(url) \(field)")
            }
        }

        @Test("A field corelibs reads as two cookies stores neither: one's Max-Age=0 does not delete the other")
        func fieldOfTwoCookies() throws {
            let (jar, storage) = try Self.jarAndStorage()
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            defer { Self.removeCookies(prefixed: p, from: storage) }
            jar.store(from: try Self.response("https://example.com/x/y", setting: "\(p)a=1; Path=/x"))
            jar.store(
                from: try Self.response("https://example.com/x/y", setting: "\(p)a=2; Path=/x, \(p)b =2; Max-Age=0"))
            let stored = (storage.cookies ?? []).filter { $0.name.hasPrefix(p) }
            #expect(stored.map(\.name) == [p + "a"] && stored.first?.value == "1", "\(stored)")
        }

        @Test("Cookies go out longest path first, then in the order they were stored")
        func sendingOrder() throws {
            let (jar, storage) = try Self.jarAndStorage()
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            defer { Self.removeCookies(prefixed: p, from: storage) }
            let names = ["z", "a", "m", "b", "q", "c"]
            for name in names {
                jar.store(from: try Self.response("https://example.com/", setting: "\(p)\(name)=1; Path=/"))
                Thread.sleep(forTimeInterval: 0.002)
            }
            jar.store(from: try Self.response("https://example.com/", setting: "\(p)deep=1; Path=/app"))
            let field = jar.cookieField(for: try #require(URL(string: "https://example.com/app/x")))
            #expect(Self.names(in: field, prefix: p) == ["deep"] + names)
        }

        @Test("A fully qualified public suffix (github.io.) is as much a public suffix: host-only, not sent to others")
        func trailingDotPublicSuffix() throws {
            let (jar, storage) = try Self.jarAndStorage()
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            jar.store(from: try Self.response("https://github.io./", setting: "\(p)s=1; Domain=github.io.; Path=/"))
            jar.store(
                from: try Self.response("https://evil.github.io./", setting: "\(p)t=1; Domain=github.io.; Path=/"))
            let stored = (storage.cookies ?? []).filter { $0.name.hasPrefix(p) }
            defer { for made in stored { storage.deleteCookie(made) } }
            #expect(stored.map(\.domain) == ["github.io."], "\(stored)")
            #expect(jar.cookieField(for: try #require(URL(string: "https://other.github.io./")))?.contains(p) != true)
        }

        @Test(
            "Limits: 4 KiB a cookie, 50 considered from one response, 50 new ones a domain (replacements still go in)")
        func storageLimits() throws {
            let (jar, storage) = try Self.jarAndStorage()
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            let host = "\(p).example"
            defer { Self.removeCookies(prefixed: p, from: storage) }
            func stored() -> [HTTPCookie] { (storage.cookies ?? []).filter { $0.name.hasPrefix(p) } }
            // One cookie over 4,096 bytes of name and value; one just at it.
            let big = String(repeating: "v", count: 4096 - (p.count + 3))
            jar.store(from: try Self.response("https://\(host)/", setting: "\(p)big=\(big)x; Path=/"))
            jar.store(from: try Self.response("https://\(host)/", setting: "\(p)fit=\(big); Path=/"))
            #expect(stored().map(\.name) == [p + "fit"])
            // 60 cookies in one response: the first 50 considered, 49 of them new for the domain.
            let sixty = (0..<60).map { "\(p)c\($0)=1; Path=/" }.joined(separator: ", ")
            jar.store(from: try Self.response("https://\(host)/", setting: sixty))
            #expect(stored().count == 50, "\(stored().count)")
            #expect(!stored().contains { $0.name == p + "c49" })
            // The domain is full: a new one is refused, a replacement and a deletion go through.
            jar.store(from: try Self.response("https://\(host)/", setting: "\(p)late=1; Path=/"))
            jar.store(from: try Self.response("https://\(host)/", setting: "\(p)c0=2; Path=/"))
            #expect(!stored().contains { $0.name == p + "late" })
            #expect(stored().first { $0.name == p + "c0" }?.value == "2")
            jar.store(from: try Self.response("https://\(host)/", setting: "\(p)c1=; Path=/; Max-Age=0"))
            jar.store(from: try Self.response("https://\(host)/", setting: "\(p)late=1; Path=/"))
            #expect(stored().count == 50 && stored().contains { $0.name == p + "late" })
        }

        @Test("A head over the field limit is refused and its cookies are not stored; within it, they are")
        func refusedHeadStoresNothing() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/flood") { _ in
                LoopbackResponse(
                    headers: [("Set-Cookie", "\(p)flood=1; Path=/")] + (0..<300).map { ("X-F\($0)", "v") },
                    body: Data("ok".utf8))
            }
            server.route("GET", "/fine") { _ in
                LoopbackResponse(headers: [("Set-Cookie", "\(p)fine=1; Path=/")], body: Data("ok".utf8))
            }
            let (transport, storage) = try Self.transportAndStorage()
            defer { Self.removeCookies(prefixed: p, from: storage) }
            await #expect {
                _ = try await transport.data(for: URLRequest(url: server.url("/flood")))
            } throws: { ($0 as? TransportError)?.code == .responseTooLarge }
            _ = try await transport.data(for: URLRequest(url: server.url("/fine")))
            #expect(server.requests(path: "/flood").count == 1)
            #expect((storage.cookies ?? []).filter { $0.name.hasPrefix(p) }.map(\.name) == [p + "fine"])
        }

        @Test("A cookie a 302 sets is sent on the hop it leads to")
        func redirectHopCarriesItsCookie() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/login") { _ in
                LoopbackResponse(
                    status: 302, headers: [("Location", "/home"), ("Set-Cookie", "\(p)session=abc; Path=/")])
            }
            server.route("GET", "/home") { _ in .text("ok") }
            let (transport, _) = try Self.transportAndStorage()
            let (_, response) = try await transport.data(for: URLRequest(url: server.url("/login")))
            #expect(response.statusCode == 200)
            #expect(Self.names(in: server.requests(path: "/home").first?.header("Cookie"), prefix: p) == ["session"])
        }

        @Test("A cookie set without a Path (or with one not starting with /) is scoped to the request's directory")
        func defaultPath() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/app/login") { _ in
                LoopbackResponse(
                    headers: [
                        ("Set-Cookie", "\(p)plain=1"),
                        ("Set-Cookie", "\(p)relative=2; Path=relative"),
                        ("Set-Cookie", "\(p)root=3; Path=/"),
                        // RFC 6265 §5.2.3: an empty Domain is ignored (a host-only cookie).
                        ("Set-Cookie", "\(p)nodomain=4; Domain=; Path=/"),
                    ], body: Data("ok".utf8))
            }
            for path in ["/app", "/app/x", "/other", "/application"] {
                server.route("GET", path) { _ in .text("ok") }
            }
            let (transport, storage) = try Self.transportAndStorage()
            defer { Self.removeCookies(prefixed: p, from: storage) }
            _ = try await transport.data(for: URLRequest(url: server.url("/app/login")))
            var sent: [String: Set<String>] = [:]
            for path in ["/app", "/app/x", "/other", "/application"] {
                _ = try await transport.data(for: URLRequest(url: server.url(path)))
                sent[path] = Set(Self.names(in: server.requests(path: path).first?.header("Cookie"), prefix: p))
            }
            // RFC 6265 §5.1.4: the default path of /app/login is /app, which matches /app and
            // /app/x, not /other nor /application.
            #expect(sent["/app"] == ["plain", "relative", "root", "nodomain"], "\(sent)")
            #expect(sent["/app/x"] == ["plain", "relative", "root", "nodomain"], "\(sent)")
            #expect(sent["/other"] == ["root", "nodomain"], "\(sent)")
            #expect(sent["/application"] == ["root", "nodomain"], "\(sent)")
        }

        @Test("A request with httpShouldHandleCookies off neither stores nor sends cookies, on any hop")
        func requestThatHandlesNoCookies() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/set") { _ in
                LoopbackResponse(headers: [("Set-Cookie", "\(p)direct=1; Path=/")], body: Data("ok".utf8))
            }
            server.route("GET", "/hop") { _ in
                LoopbackResponse(
                    status: 302, headers: [("Location", "/landing"), ("Set-Cookie", "\(p)hop=2; Path=/")])
            }
            server.route("GET", "/landing") { _ in .text("ok") }
            server.route("GET", "/echo") { _ in .text("ok") }
            let (transport, storage) = try Self.transportAndStorage()
            defer { Self.removeCookies(prefixed: p, from: storage) }
            for path in ["/set", "/hop"] {
                var request = URLRequest(url: server.url(path))
                request.httpShouldHandleCookies = false
                _ = try await transport.data(for: request)
            }
            #expect((storage.cookies ?? []).filter { $0.name.hasPrefix(p) }.isEmpty)
            // Stored by a request that handles cookies, then not sent by one that does not.
            _ = try await transport.data(for: URLRequest(url: server.url("/set")))
            var quiet = URLRequest(url: server.url("/echo"))
            quiet.httpShouldHandleCookies = false
            _ = try await transport.data(for: quiet)
            let echoed = Self.names(in: server.requests(path: "/echo").first?.header("Cookie"), prefix: p)
            let landed = Self.names(in: server.requests(path: "/landing").first?.header("Cookie"), prefix: p)
            #expect(echoed.isEmpty, "\(echoed)")
            #expect(landed.isEmpty, "\(landed)")
            #expect(server.requests(path: "/landing").count == 1)
        }

        @Test("Max-Age: any number of digits is clamped to ten years; anything else is no Max-Age; the last one wins")
        func maxAgeParsing() async throws {
            let tenYears = 315_360_000
            let cases: [(String, Int?)] = [
                ("a=1; Max-Age=99999999999999999999999", tenYears),
                ("a=1; Max-Age=-99999999999999999999999", -tenYears),
                ("a=1; max-age = 60", 60), ("a=1; Max-Age=0", 0), ("a=1; Max-Age=5; Max-Age=7", 7),
                ("a=1; Max-Age=12x", nil), ("a=1; Max-Age=", nil), ("a=1; Max-Age=+5", nil),
                ("a=1; Max-Age=1e3", nil), ("a=1; Max-Age=-", nil), ("a=1", nil),
                // Leading zeros do not count as digits: a deletion stays one.
                ("a=1; Max-Age=0000000000", 0), ("a=1; Max-Age=00000000001", 1), ("a=1; Max-Age=-0000000000005", -5),
            ]
            for (field, expected) in cases {
                #expect(SessionCookieJar.maxAge(in: field) == expected, "\(field)")
            }
            // On the wire: a huge Max-Age is stored, expiring in ten years, no trap.
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let p = "gn\(UInt32.random(in: 0...UInt32.max))"
            server.route("GET", "/set") { _ in
                LoopbackResponse(
                    headers: [("Set-Cookie", "\(p)long=1; Path=/; Max-Age=99999999999999999999999")],
                    body: Data("ok".utf8))
            }
            let (transport, storage) = try Self.transportAndStorage()
            _ = try await transport.data(for: URLRequest(url: server.url("/set")))
            let stored = (storage.cookies ?? []).filter { $0.name.hasPrefix(p) }
            let expires = stored.first?.expiresDate?.timeIntervalSinceNow ?? 0
            #expect(stored.count == 1)
            #expect(expires > Double(tenYears) - 60 && expires <= Double(tenYears), "\(expires)")
            for made in stored { storage.deleteCookie(made) }
        }

        @Test("A Domain that is a public suffix, or above one, is refused; a parent domain that is not is kept")
        func publicSuffixes() throws {
            // Not a silent fallback: on this machine the list must be loaded.
            #expect(PublicSuffixList.isLoaded)
            let cases: [(host: String, domain: String, accepted: Bool)] = [
                ("api.example.com", "com", false), ("api.example.co.uk", "co.uk", false),
                ("me.github.io", "github.io", false), ("api.example.com", "example.com", true),
                ("a.b.example.co.uk", "example.co.uk", true), ("api.example.com", "api.example.com", true),
                ("api.example.com", "other.com", false), ("evilexample.com", "example.com", false),
                ("10.0.0.1", "0.0.1", false),
                // A trailing dot (libpsl accepts `github.io.` from `evil.github.io.`).
                ("evil.github.io.", "github.io.", false), ("a.co.uk.", "co.uk.", false),
                ("api.example.com.", "example.com.", true),
            ]
            for (host, domain, accepted) in cases {
                let url = try #require(URL(string: "http://\(host)/"))
                let parsed = HTTPCookie.cookies(
                    withResponseHeaderFields: ["Set-Cookie": "n=v; Domain=\(domain)"], for: url)
                let cookie = try #require(parsed.first, "\(host) \(domain)")
                #expect(SessionCookieJar.isAcceptable(cookie, from: url, host: host) == accepted, "\(host) \(domain)")
            }
        }
    }
#endif
