import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// An auth service that sends its token in a header of its own, as API-key schemes do.
struct APIKeyAuthService: AuthServiceProtocol {
    let key: String
    var headerField = "X-API-Key"
    var headerValuePrefix: String { "" }
    func loadAccessToken() async throws -> String? { key }
    func saveAccessToken(_ token: String) async throws {}
    func deleteAccessToken() async throws {}
}

/// Credentials never follow a redirect to another origin: another host on the same port,
/// a custom auth header, and https → http. (Another port, and same-origin redirects keeping
/// them, are in `TransportIntegrationTests`.) Every test asserts what the second origin received.
@Suite("Credentials never cross origins on a redirect")
struct RedirectCredentialTests {
    static let credentialHeaders = ["Cookie": "session=cookie-secret", "Proxy-Authorization": "Basic proxy-secret"]

    /// Every header value the server received, for a grep.
    static func everything(_ requests: [LoopbackRequest]) -> String {
        requests.flatMap(\.headers).map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    @Test("Another host on the same port (127.0.0.1 → localhost) gets no credentials", arguments: TransportKind.all)
    func otherHost(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind, token: "host-secret")
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/landing") { _ in .json(#"{"id":1,"property":"elsewhere"}"#) }
        harness.server.route("GET", "/start") { _ in
            .redirect(to: "http://localhost:\(harness.server.port)/landing")
        }
        let endpoint = Endpoint(path: "/start", method: .get, requiresAuth: true, headers: Self.credentialHeaders)

        let model: Model = try await harness.service.request(to: endpoint, via: harness.environment)

        #expect(model.property == "elsewhere")
        let first = try #require(harness.server.requests(path: "/start").first)
        #expect(first.header("Authorization") == "Bearer host-secret")
        #expect(first.header("Cookie") == "session=cookie-secret")
        let landed = try #require(harness.server.requests(path: "/landing").first)
        #expect(landed.header("Host")?.hasPrefix("localhost") == true, "the hop went to the other host name")
        #expect(!Self.everything([landed]).contains("secret"), "\(Self.everything([landed]))")
    }

    @Test(
        "Credential headers a caller set (X-Api-Key, X-Auth-Token, PRIVATE-TOKEN, X-Auth-Key) do not cross to another port",
        arguments: TransportKind.all)
    func callerSetKeyHeaders(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        other.route("GET", "/landing") { _ in .json(#"{"id":1,"property":"elsewhere"}"#) }
        server.route("GET", "/start") { _ in .redirect(to: other.url("/landing").absoluteString) }
        var request = URLRequest(url: server.url("/start"))
        request.setValue("key-secret", forHTTPHeaderField: "X-Api-Key")
        request.setValue("token-secret", forHTTPHeaderField: "x-auth-token")
        // Named like secrets, on no list: GitLab's, Cloudflare's, a master key.
        request.setValue("gitlab-secret", forHTTPHeaderField: "PRIVATE-TOKEN")
        request.setValue("cf-secret", forHTTPHeaderField: "X-Auth-Key")
        request.setValue("master-secret", forHTTPHeaderField: "X-Master-Key")
        request.setValue("kept", forHTTPHeaderField: "X-Trace")
        request.setValue("idem-1", forHTTPHeaderField: "Idempotency-Key")
        // Ordinary headers that only look close to a credential's name still follow.
        request.setValue("name", forHTTPHeaderField: "X-Sort-Key")
        request.setValue("s-1", forHTTPHeaderField: "X-Session-Id")

        let (_, response) = try await kind.make().data(for: request)

        #expect(response.statusCode == 200)
        #expect(server.requests(path: "/start").first?.header("X-Api-Key") == "key-secret")
        let landed = try #require(other.requests(path: "/landing").first)
        #expect(!Self.everything([landed]).contains("secret"), "\(Self.everything([landed]))")
        #expect(landed.header("X-Trace") == "kept", "other headers still follow")
        #expect(landed.header("Idempotency-Key") == "idem-1")
        #expect(landed.header("X-Sort-Key") == "name" && landed.header("X-Session-Id") == "s-1")
    }

    /// `X-API-Key` is one of ``Origin/credentialHeaders``; `X-Tenant-Secret` is not, so only the
    /// service's naming its auth service's header keeps it from crossing.
    @Test(
        "An auth service's own header (a listed one, and one no list knows) does not cross to another port",
        arguments: TransportKind.all, ["X-API-Key", "X-Tenant-Secret"])
    func customAuthHeader(kind: TransportKind, field: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        other.route("GET", "/landing") { _ in .json(#"{"id":1,"property":"elsewhere"}"#) }
        server.route("GET", "/start") { _ in .redirect(to: other.url("/landing").absoluteString) }
        let service = HTTPNetworkService(
            transport: try kind.make(), authService: APIKeyAuthService(key: "key-secret", headerField: field))

        let model: Model = try await service.request(
            to: Endpoint(path: "/start", method: .get, requiresAuth: true),
            via: DefaultAPIEnvironment(baseURL: server.baseURL))

        #expect(model.property == "elsewhere")
        #expect(server.requests(path: "/start").first?.header(field) == "key-secret")
        let landed = try #require(other.requests(path: "/landing").first)
        #expect(landed.header(field) == nil)
        #expect(
            !Self.everything(other.receivedRequests).contains("secret"), "\(Self.everything(other.receivedRequests))")
    }

    @Test(
        "A ReauthTransport stack used without the service drops its auth header on a cross-origin hop",
        arguments: TransportKind.all)
    func customAuthHeaderThroughReauth(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        other.route("GET", "/landing") { _ in .json("{}") }
        server.route("GET", "/start") { _ in .redirect(to: other.url("/landing").absoluteString) }
        let auth = APIKeyAuthService(key: "key-secret")
        let stack = ReauthTransport(inner: try kind.make(), authService: auth, refreshToken: {})
        let request = try await auth.authorize(URLRequest(url: server.url("/start")))

        let (_, response) = try await stack.data(for: request)

        #expect(response.statusCode == 200)
        #expect(server.requests(path: "/start").first?.header("X-API-Key") == "key-secret")
        #expect(other.requests(path: "/landing").count == 1)
        #expect(
            !Self.everything(other.receivedRequests).contains("secret"), "\(Self.everything(other.receivedRequests))")
    }

    @Test("An auth service's own header is kept on a same-origin redirect", arguments: TransportKind.all)
    func customAuthHeaderSameOrigin(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/old") { _ in .redirect(to: "/new", status: 301) }
        server.route("GET", "/new") { _ in .json("{}") }
        let service = HTTPNetworkService(transport: try kind.make(), authService: APIKeyAuthService(key: "key-same"))

        try await service.requestVoid(
            to: Endpoint(path: "/old", method: .get, requiresAuth: true),
            via: DefaultAPIEnvironment(baseURL: server.baseURL))

        #expect(server.requests(path: "/new").first?.header("X-API-Key") == "key-same")
    }

    @Test("The scheme alone makes another origin: https and http on the same host and port differ")
    func schemeIsPartOfTheOrigin() {
        // No socket serves TLS and plain text on one port, so on the wire a downgrade always
        // changes the port too (below); the scheme's own part is asserted here.
        #expect(
            !Origin.isSameOrigin(
                URL(string: "https://api.example.com:8443/a"), URL(string: "http://api.example.com:8443/b")))
        #expect(!Origin.isSameOrigin(URL(string: "https://h/"), URL(string: "http://h:443/")))
        #expect(Origin.isSameOrigin(URL(string: "https://h/x"), URL(string: "HTTPS://H:443/y")))
    }

    #if canImport(CCurl)
        /// TLS comes from nginx here, and only `CurlTransport` can be told to trust the test CA on
        /// Linux, so `URLSessionTransport`'s side (the same `RedirectTracker` rule, called from its
        /// redirect delegate) is checked without a socket in `RedirectDowngradeTests`.
        @Test(
            "https → http is not followed: the 3xx is the response and the plain-text server gets nothing (libcurl, nginx TLS)",
            arguments: [("GET", 302), ("POST", 307), ("PUT", 308)])
        func schemeDowngrade(method: String, status: Int) async throws {
            let pki = try await TestPKI.make()
            defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
            let plain = try LoopbackServer()
            defer { plain.shutdown() }
            plain.route(method, "/landing") { _ in .json(#"{"id":1,"property":"downgraded"}"#) }
            let nginx = try NginxServer(
                tls: NginxServer.TLS(certificatePath: pki.chainPath, keyPath: pki.leafKeyPath), serverName: "localhost",
                extraServerConfig: "location = /start { return \(status) \(plain.url("/landing").absoluteString); }")
            defer { nginx.stop() }
            // CurlTransport trusting the test CA for localhost (PinningTransport is CurlTransport with
            // per-host trust anchors), so the TLS origin is a real, verified one.
            let ca = try #require(try CertificatePinning.certificatesDER(fromPEM: try pki.pem(pki.caPath)).first)
            let transport = PinningTransport(pinnedDomains: [
                "localhost": CertificatePinningEvaluator(pinnedCertificates: [ca], performDefaultValidation: false)
            ])
            var request = URLRequest(url: nginx.baseURL.appendingPathComponent("start"))
            request.httpMethod = method
            if method != "GET" { request.httpBody = Data("card=4111-secret".utf8) }
            request.setValue("Bearer tls-secret", forHTTPHeaderField: "Authorization")

            let (_, response) = try await transport.data(for: request)

            #expect(response.statusCode == status, "the redirect itself is the answer")
            #expect(response.value(forHTTPHeaderField: "Location") == plain.url("/landing").absoluteString)
            let log = await nginx.accessLog(atLeast: 1)
            #expect(log.count == 1, "the TLS origin saw the first request: \(log)")
            #expect(plain.acceptedConnectionCount == 0, "nothing went out in clear text: \(plain.receivedRequests)")

            // Through the service the same refusal is a typed status error, not a success.
            let service = HTTPNetworkService(
                transport: transport, authService: InMemoryAuthService(token: "tls-secret"))
            await #expect(throws: NetworkError.self) {
                let _: Model = try await service.request(
                    to: Endpoint(path: "/start", method: .get, requiresAuth: true, headers: Self.credentialHeaders),
                    via: DefaultAPIEnvironment(baseURL: nginx.baseURL))
            }
            #expect(plain.acceptedConnectionCount == 0, "\(plain.receivedRequests)")
        }
    #endif

    @Test(
        "A password in the URL is not sent to the host a `//other-host` Location names",
        arguments: TransportKind.all)
    func userInfoToAnotherHost(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/r") { _ in .redirect(to: "//localhost:\(server.port)/x") }
        server.route("GET", "/x") { _ in .text("landed") }
        let transport = try kind.make()
        let url = try #require(URL(string: "http://user:url-secret@127.0.0.1:\(server.port)/r"))

        let (body, response) = try await transport.data(for: URLRequest(url: url))

        #expect(String(decoding: body, as: UTF8.self) == "landed")
        #expect(response.url?.host == "localhost")
        let first = try #require(server.requests(path: "/r").first)
        #expect(first.header("Authorization")?.hasPrefix("Basic ") == true, "the first origin got the URL's password")
        let landed = try #require(server.requests(path: "/x").first)
        #expect(landed.header("Host")?.hasPrefix("localhost") == true)
        #expect(landed.header("Authorization") == nil, "\(Self.everything([landed]))")
    }
}

/// A `Host` of the caller's would take the request, and its credentials, to another virtual host
/// behind the same front end (libcurl and corelibs sent it; Apple's URLSession ignores it).
@Suite("A caller's Host header is refused before anything is sent")
struct CallerHostHeaderTests {
    @Test(
        "Endpoint headers and a plain request with Host: .invalidRequest on every transport, nothing sent",
        arguments: TransportKind.all)
    func refused(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, prefix: "/") { _ in .status(204) }
        let service = HTTPNetworkService(
            transport: try kind.make(), authService: InMemoryAuthService(token: "host-secret"))
        for name in ["Host", "host", "HOST"] {
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/me", method: .get, requiresAuth: true, headers: [name: "tenant-b.example"]),
                    via: DefaultAPIEnvironment(baseURL: server.baseURL))
                Issue.record("\(name): sent")
            } catch let error as NetworkError {
                #expect(error.kind == .invalidRequest, "\(error)")
                #expect(!String(describing: error).contains("tenant-b"), "the value is not echoed: \(error)")
            }
            var request = URLRequest(url: server.url("/plain"))
            request.setValue("tenant-b.example", forHTTPHeaderField: name)
            await #expect(throws: TransportError.self) { _ = try await kind.make().data(for: request) }
        }
        #expect(server.receivedRequests.isEmpty, "\(server.receivedRequests.map(\.headers))")
    }
}

@Suite("A caller's Expect header is refused before anything is sent")
struct CallerExpectHeaderTests {
    @Test(
        "Expect: 100-continue on a POST: .invalidRequest on every transport and through the service, nothing sent",
        arguments: TransportKind.all)
    func refused(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, prefix: "/") { _ in .status(204) }
        // libcurl resent the body on a 417, on the same exchange, and read the next answer's
        // head as the 417's trailers.
        for name in ["Expect", "expect"] {
            var request = URLRequest(url: server.url("/upload"))
            request.httpMethod = "POST"
            request.httpBody = Data(repeating: 0x61, count: 2048)
            request.setValue("100-continue", forHTTPHeaderField: name)
            do {
                _ = try await kind.make().data(for: request)
                Issue.record("\(name): sent")
            } catch let error as TransportError {
                #expect(error.code == .invalidRequest, "\(error)")
            }
            let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
            do {
                try await service.requestVoid(
                    to: Endpoint(
                        path: "/upload", method: .post, body: ["a": EndpointAnyEncodable(1)],
                        headers: [name: "100-continue"]),
                    via: DefaultAPIEnvironment(baseURL: server.baseURL))
                Issue.record("\(name): sent by the service")
            } catch let error as NetworkError {
                #expect(error.kind == .invalidRequest, "\(error)")
            }
        }
        #expect(server.receivedRequests.isEmpty)
    }
}

@Suite("A GET or HEAD with a body is refused before anything is sent")
struct BodyOnGetTests {
    @Test(
        "GET and HEAD with a body (data or stream): .invalidRequest on every transport, nothing sent; an empty body goes",
        arguments: TransportKind.all)
    func refused(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, prefix: "/") { _ in .status(204) }
        // URLSession refused it as `.other` (corelibs: "GET method must not have a body"),
        // CurlTransport sent it.
        for method in ["GET", "get", "HEAD"] {
            for useStream in [false, true] {
                var request = URLRequest(url: server.url("/search"))
                request.httpMethod = method
                if useStream {
                    request.httpBodyStream = InputStream(data: Data("{}".utf8))
                } else {
                    request.httpBody = Data("{}".utf8)
                }
                do {
                    _ = try await kind.make().data(for: request)
                    Issue.record("\(method) \(useStream): sent")
                } catch let error as TransportError {
                    #expect(error.code == .invalidRequest, "\(method) \(useStream): \(error)")
                }
            }
        }
        #expect(server.receivedRequests.isEmpty)
        var empty = URLRequest(url: server.url("/empty"))
        empty.httpBody = Data()
        let (_, response) = try await kind.make().data(for: empty)
        #expect(response.statusCode == 204)
    }
}
