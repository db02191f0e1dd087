import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `dump(error)` (and `String(reflecting:)` and LLDB's `po`, which read the same mirror) must not show what an
/// error's `description` leaves out: a query token or user info in its URL, a `Set-Cookie` or a
/// credential in the response, a `URLError`'s failing URL. The properties keep everything.
@Suite("Errors: what dump shows")
struct ErrorReflectionTests {
    static let secrets = [
        "QUERY-SECRET", "USER-SECRET", "COOKIE-SECRET", "BODY-SECRET", "FAILING-SECRET", "ECHOED-TOKEN-1234",
    ]

    static let url = URL(string: "https://alice:USER-SECRET@api.example.com/v1/items?access_token=QUERY-SECRET&page=2")!

    static let response = HTTPErrorResponse(
        statusCode: 401,
        headers: ["Set-Cookie": "sid=COOKIE-SECRET; Path=/", "Content-Type": "application/json"],
        body: Data(#"{"password":"BODY-SECRET","error":"denied"}"#.utf8), url: url)

    /// A `URLError` as corelibs and Apple's Foundation make them: the failing URL in user info.
    static let urlError = URLError(
        .timedOut, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "https://api.example.com/?key=FAILING-SECRET")!]
    )

    static func dumped(_ value: Any) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }

    static func expectNoSecret(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in secrets {
            #expect(!text.contains(secret), "\(secret) shown:\n\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test("A TransportError's dump hides its URL's secrets, its response's and its URLError's")
    func transportError() {
        let error = TransportError(
            .authenticationFailed, url: Self.url, message: "The refresh failed.", underlyingError: Self.urlError,
            response: Self.response)
        let text = Self.dumped(error)
        Self.expectNoSecret(text)
        #expect(text.contains("authenticationFailed"))
        #expect(text.contains("access_token=<redacted>&page=2"), "\(text)")
        #expect(text.contains("Set-Cookie"))
        #expect(text.contains("statusCode: 401"))
        #expect(text.contains("\(Self.response.body.count) bytes"))
        #expect(text.contains(#"body: "43 bytes: {\"error\":\"denied\""#), "the body's harmless part is shown: \(text)")
        #expect(text.contains("URLError(code: \(URLError.Code.timedOut.rawValue))"))
        // The properties are the caller's data, kept as received.
        #expect(error.url == Self.url)
        #expect(error.response?.header("Set-Cookie") == "sid=COOKIE-SECRET; Path=/")
        #expect((error.underlyingError as? URLError)?.failingURL?.absoluteString.contains("FAILING-SECRET") == true)
    }

    @Test("A NetworkError's dump, in both cases, hides the same")
    func networkError() {
        let transport = TransportError(.timedOut, url: Self.url, message: "Timed out.", underlyingError: Self.urlError)
        let errors: [NetworkError] = [
            NetworkError(
                .transport(.timedOut), message: "Timed out.", url: Self.url, underlyingError: transport),
            NetworkError(
                .httpStatusError(.unauthorized), message: "HTTP 401.", url: Self.url, response: Self.response,
                underlyingError: Self.urlError),
        ]
        for error in errors {
            let text = Self.dumped(error)
            Self.expectNoSecret(text)
            #expect(text.contains("access_token=<redacted>&page=2"), "\(text)")
            #expect(error.url == Self.url)
        }
        Self.expectNoSecret(Self.dumped(errors[1].details))
        if case .httpStatusError(let failure) = errors[1] {
            Self.expectNoSecret(Self.dumped(failure))
        } else {
            Issue.record("expected a status error")
        }
    }

    @Test("A ReauthError's dump shows its URLError by code only")
    func reauthError() {
        let error = ReauthError(.refreshFailed, message: "The refresh failed.", underlyingError: Self.urlError)
        let text = Self.dumped(error)
        Self.expectNoSecret(text)
        #expect(text.contains("refreshFailed"))
    }

    @Test(
        "Over the wire, a failed request's error dumps without the query token, the cookie or the body's secret",
        arguments: TransportKind.all)
    func onTheWire(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/account") { _ in
            LoopbackResponse(
                status: 403,
                headers: [("Content-Type", "application/json"), ("Set-Cookie", "sid=COOKIE-SECRET; HttpOnly")],
                body: Data(#"{"password":"BODY-SECRET","error":"forbidden"}"#.utf8))
        }
        let service = HTTPNetworkService(transport: try kind.make())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let endpoint = Endpoint(
            path: "/account", method: .get, query: [URLQueryItem(name: "access_token", value: "QUERY-SECRET")])
        let error = await #expect(throws: NetworkError.self) {
            try await service.requestVoid(to: endpoint, via: environment)
        }
        #expect(server.requests(path: "/account").count == 1)
        #expect(error?.statusCode == 403)
        #expect(error?.response?.header("Set-Cookie") == "sid=COOKIE-SECRET; HttpOnly", "kept as received")
        #expect(error?.url?.query?.contains("QUERY-SECRET") == true, "kept as sent")
        let text = Self.dumped(error as Any)
        Self.expectNoSecret(text)
        #expect(text.contains("access_token=<redacted>"), "\(text)")
        #expect(text.contains(#"\"error\":\"forbidden\""#), "\(text)")
    }

    @Test(
        "Over the wire, a token the server echoes in its error body or a header of its own is not in the dump",
        arguments: TransportKind.all)
    func echoedToken(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let echo: @Sendable (LoopbackRequest) -> LoopbackResponse = { request in
            let token = request.header("Authorization") ?? ""
            return LoopbackResponse(
                status: request.path.hasPrefix("/denied") ? 403 : 401,
                headers: [("Content-Type", "application/json"), ("X-Echo", token)],
                body: Data(#"{"error":"invalid token \#(token)","hint":"sign in"}"#.utf8))
        }
        server.route("GET", "/denied", handler: echo)
        server.route("GET", "/expired", handler: echo)
        let auth = InMemoryAuthService(token: "ECHOED-TOKEN-1234")
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)

        // A status error made by the service.
        let service = HTTPNetworkService(transport: try kind.make(), authService: auth)
        let denied = await #expect(throws: NetworkError.self) {
            try await service.requestVoid(
                to: Endpoint(path: "/denied", method: .get, requiresAuth: true), via: environment)
        }
        #expect(server.requests(path: "/denied").first?.header("Authorization") == "Bearer ECHOED-TOKEN-1234")
        #expect(denied?.response?.header("X-Echo") == "Bearer ECHOED-TOKEN-1234", "kept as received")
        var text = Self.dumped(denied as Any)
        Self.expectNoSecret(text)
        #expect(text.contains("sign in"), "\(text)")

        // A 401 that ReauthTransport could not recover (the refresh fails), through the service
        // and from the transport alone.
        struct RefreshFailed: Error {}
        let reauth = ReauthTransport(inner: try kind.make(), authService: auth) { throw RefreshFailed() }
        let reauthService = HTTPNetworkService(transport: reauth, authService: auth)
        let expired = await #expect(throws: NetworkError.self) {
            try await reauthService.requestVoid(
                to: Endpoint(path: "/expired", method: .get, requiresAuth: true), via: environment)
        }
        #expect(expired?.statusCode == 401)
        text = Self.dumped(expired as Any)
        Self.expectNoSecret(text)
        #expect(text.contains("sign in"), "\(text)")
        var request = URLRequest(url: server.url("/expired"))
        request.setValue("Bearer ECHOED-TOKEN-1234", forHTTPHeaderField: "Authorization")
        let direct = await #expect(throws: TransportError.self) { _ = try await reauth.data(for: request) }
        #expect(direct?.code == .authenticationFailed)
        Self.expectNoSecret(Self.dumped(direct as Any))
    }

    @Test(
        "ReauthTransport alone: a token sent in the auth service's own header and echoed back is not in the dump",
        arguments: TransportKind.all)
    func echoedOwnHeader(kind: TransportKind) async throws {
        struct TicketAuth: AuthServiceProtocol {
            var headerField: String { "X-Ticket" }
            var headerValuePrefix: String { "" }
            func loadAccessToken() async throws -> String? { "ECHOED-TOKEN-1234" }
            func saveAccessToken(_ token: String) async throws {}
            func deleteAccessToken() async throws {}
        }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/expired") { request in
            LoopbackResponse(
                status: 401, headers: [("X-Echo", request.header("X-Ticket") ?? "")],
                body: Data("ticket \(request.header("X-Ticket") ?? "") expired".utf8))
        }
        struct RefreshFailed: Error {}
        let reauth = ReauthTransport(inner: try kind.make(), authService: TicketAuth()) { throw RefreshFailed() }
        var request = URLRequest(url: server.url("/expired"))
        request.setValue("ECHOED-TOKEN-1234", forHTTPHeaderField: "X-Ticket")
        let error = await #expect(throws: TransportError.self) { _ = try await reauth.data(for: request) }
        #expect(error?.code == .authenticationFailed)
        #expect(server.requests(path: "/expired").first?.header("X-Ticket") == "ECHOED-TOKEN-1234")
        let text = Self.dumped(error as Any)
        Self.expectNoSecret(text)
        #expect(text.contains("expired"), "\(text)")
    }

    @Test("An NSError, a CocoaError and an EncodingError beneath show no URL, path or value")
    func wrappedFoundationErrors() {
        let nsError = NSError(
            domain: NSURLErrorDomain, code: -1001,
            userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "https://h/?key=FAILING-SECRET")!])
        let cocoa = CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: "/home/USER-SECRET/file"])
        let encoding = EncodingError.invalidValue(
            "BODY-SECRET", EncodingError.Context(codingPath: [], debugDescription: "BODY-SECRET is not valid"))
        for underlying in [nsError, cocoa, encoding] as [any Error] {
            let error = NetworkError(.encodingFailed, message: "Failed.", underlyingError: underlying)
            let text = Self.dumped(error)
            Self.expectNoSecret(text)
            Self.expectNoSecret(
                Self.dumped(TransportError(.other, url: nil, message: "x", underlyingError: underlying)))
        }
        #expect(Self.dumped(NetworkError(.encodingFailed, message: "", underlyingError: cocoa)).contains("CocoaError"))
        #expect(
            Self.dumped(NetworkError(.encodingFailed, message: "", underlyingError: encoding)).contains(
                "EncodingError.invalidValue(String)"))
    }

    @Test("Over the wire, a connection refused dumps without the query token", arguments: TransportKind.all)
    func refused(kind: TransportKind) async throws {
        let port = try RefusingPort()
        let transport = try kind.make()
        let url = URL(string: "http://127.0.0.1:\(port.port)/x?access_token=QUERY-SECRET")!
        let error = await #expect(throws: TransportError.self) {
            _ = try await transport.data(for: URLRequest(url: url))
        }
        #expect(error?.code == .cannotConnect)
        let text = Self.dumped(error as Any)
        Self.expectNoSecret(text)
        #expect(text.contains("cannotConnect"))
    }
}
