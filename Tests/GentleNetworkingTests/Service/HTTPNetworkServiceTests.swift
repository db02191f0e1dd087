import Foundation
import GentleNetworking
import Testing

@Suite("HTTPNetworkService over canned transports")
struct HTTPNetworkServiceTests {
    let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://api.example.com"))

    func service(
        _ transport: any HTTPTransportProtocol, token: String? = "t0k3n",
        logger: any NetworkLogger = NoOpNetworkLogger()
    )
        -> HTTPNetworkService
    {
        HTTPNetworkService(transport: transport, authService: InMemoryAuthService(token: token), logger: logger)
    }

    @Test("Decodes one model, a list, and accepts an empty 204")
    func decodes() async throws {
        let transport = CannedRoutesTransport(routes: [
            CannedRoute(
                pattern: RequestPattern(method: .get, path: "/m/1"),
                response: CannedResponse(string: #"{"id":1,"property":"a"}"#)),
            CannedRoute(
                pattern: RequestPattern(method: .get, path: "/m"),
                response: CannedResponse(string: #"[{"id":1,"property":"a"},{"id":2,"property":"b"}]"#)),
            CannedRoute(
                pattern: RequestPattern(method: .delete, path: "/m/1"),
                response: CannedResponse(data: Data(), statusCode: 204)),
        ])
        let service = service(transport)
        let one: Model = try await service.request(to: Endpoint(path: "/m/1", method: .get), via: environment)
        #expect(one == Model(id: 1, property: "a"))
        let many: [Model] = try await service.requestModels(to: Endpoint(path: "/m", method: .get), via: environment)
        #expect(many.map(\.id) == [1, 2])
        try await service.requestVoid(to: Endpoint(path: "/m/1", method: .delete), via: environment)
        #expect(transport.receivedRequests.map { $0.httpMethod ?? "" } == ["GET", "GET", "DELETE"])
    }

    @Test("Returns the HTTPURLResponse alongside the model")
    func returnsResponse() async throws {
        let transport = CannedResponseTransport(
            cannedResponse: CannedResponse(
                string: #"{"id":3,"property":"c"}"#, statusCode: 201, headerFields: ["X-Total": "40"]))
        let (model, response): (Model, HTTPURLResponse) = try await service(transport).requestWithResponse(
            to: Endpoint(path: "/m", method: .post), via: environment)
        #expect(model.id == 3)
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "X-Total") == "40")
    }

    @Test(
        "Maps non-2xx statuses to HTTPStatusError, keeping body and headers",
        arguments: [
            (301, HTTPStatusError.redirect(301)), (304, .redirect(304)), (400, .clientError(400)),
            (401, .unauthorized), (403, .forbidden), (404, .notFound), (409, .clientError(409)),
            (429, .rateLimited), (500, .internalServerError), (502, .serverError(502)), (503, .serviceUnavailable),
        ])
    func mapsStatuses(statusCode: Int, expected: HTTPStatusError) async throws {
        let transport = CannedResponseTransport(
            cannedResponse: CannedResponse(
                string: #"{"error":"nope","code":\#(statusCode)}"#, statusCode: statusCode,
                headerFields: ["X-Request-Id": "abc"]))
        do {
            let _: Model = try await service(transport).request(
                to: Endpoint(path: "/m", method: .get), via: environment)
            Issue.record("expected a throw")
        } catch let error as NetworkError {
            #expect(error.kind == .httpStatusError(expected))
            #expect(error.statusError?.statusCode == statusCode)
            #expect(error.response?.statusCode == statusCode)
            #expect(error.response?.header("x-request-id") == "abc")
            #expect(error.response?.bodyText == #"{"error":"nope","code":\#(statusCode)}"#)
            struct Payload: Decodable { let error: String }
            #expect(try error.response?.decodeBody(as: Payload.self).error == "nope")
        }
    }

    @Test("HTTPStatusError round-trips status codes; only 2xx is not an error; out of range is serverError")
    func statusErrorInit() {
        for code in [300, 399, 400, 401, 403, 404, 429, 499, 500, 503, 599, 100, 600, 999, -1] {
            #expect(HTTPStatusError(statusCode: code)?.statusCode == code)
        }
        for code in [200, 204, 299] {
            #expect(HTTPStatusError(statusCode: code) == nil)
        }
        #expect(HTTPStatusError(statusCode: 600) == .serverError(600))
        #expect(HTTPStatusError(statusCode: 101) == .serverError(101))
        #expect(HTTPStatusError(statusCode: Int.min) == .serverError(Int.min))
        #expect(HTTPStatusError(statusCode: 422) == .clientError(422))
        #expect(HTTPStatusError(statusCode: 302) == .redirect(302))
    }

    @Test("A status outside the HTTP range is a status error, serverError(700), with its body")
    func outOfRangeStatus() async {
        let transport = CannedResponseTransport(string: "odd", statusCode: 700)
        await #expect {
            try await service(transport).requestVoid(to: Endpoint(path: "/m", method: .get), via: environment)
        } throws: { error in
            guard case .httpStatusError(let status) = error as? NetworkError else { return false }
            return status.error == .serverError(700) && status.response?.bodyText == "odd"
        }
    }

    @Test("Seed-style matching: catch NetworkError.httpStatusError(.unauthorized)")
    func seedStyleCatch() async throws {
        let transport = CannedResponseTransport(string: "{}", statusCode: 401)
        var caught = false
        do {
            try await service(transport).requestVoid(to: Endpoint(path: "/m", method: .get), via: environment)
        } catch NetworkError.httpStatusError(.unauthorized) {
            caught = true
        }
        #expect(caught)
        let error = NetworkError(.httpStatusError(.notFound), message: "x")
        switch error {
        case .httpStatusError(.notFound): break
        default: Issue.record("switch pattern did not match")
        }
        if case .httpStatusError(.forbidden) = error { Issue.record(".forbidden matched a 404") }
    }

    @Test("A decoding failure names the type, the coding path, the status and a redacted excerpt")
    func decodingContext() async throws {
        struct Wrapper: Decodable { let items: [Model] }
        let body = #"{"access_token":"SECRET-123","items":[{"id":1,"property":"a"},{"id":"two","property":"b"}]}"#
        let transport = CannedResponseTransport(string: body, statusCode: 200)
        do {
            let _: Wrapper = try await service(transport).request(
                to: Endpoint(path: "/m", method: .get), via: environment)
            Issue.record("expected a throw")
        } catch let error as NetworkError {
            #expect(error.kind == .decodingFailed)
            let failure = try #require(error.decodingFailure)
            #expect(failure.modelType == "Wrapper")
            #expect(failure.codingPath == "items[1].id")
            #expect(failure.statusCode == 200)
            #expect(failure.reason.contains("type mismatch"))
            #expect(!failure.bodyExcerpt.contains("SECRET-123"))
            #expect(failure.bodyExcerpt.contains("<redacted>"))
            #expect(!error.description.contains("SECRET-123"))
            #expect(error.underlyingError is DecodingError)
        }
    }

    @Test("A decoding failure's text is bounded, and withholds the decoder's quote of a value under a secret name")
    func decodingTextBoundedAndRedacted() async throws {
        enum Role: String, Decodable { case admin }
        struct Huge: Decodable { let role: Role }
        struct Secretive: Decodable { let session_token: Role }
        let huge = #"{"role":""# + String(repeating: "x", count: 1 << 20) + #""}"#
        do {
            let _: Huge = try await service(CannedResponseTransport(string: huge, statusCode: 200)).request(
                to: Endpoint(path: "/m", method: .get), via: environment)
            Issue.record("expected a throw")
        } catch let error as NetworkError {
            let failure = try #require(error.decodingFailure)
            #expect(failure.reason.utf8.count <= 512 + 3)
            #expect(error.message.utf8.count < 4_096, "\(error.message.utf8.count) bytes")
            #expect(error.description.utf8.count < 4_096)
        }
        let secret = #"{"session_token":"sk-live-0123456789"}"#
        do {
            let _: Secretive = try await service(CannedResponseTransport(string: secret, statusCode: 200)).request(
                to: Endpoint(path: "/m", method: .get), via: environment)
            Issue.record("expected a throw")
        } catch let error as NetworkError {
            let failure = try #require(error.decodingFailure)
            #expect(failure.codingPath == "session_token")
            #expect(failure.reason.hasPrefix("data corrupted"))
            #expect(!error.message.contains("sk-live"), "\(error.message)")
            #expect(!error.description.contains("sk-live"))
        }
    }

    @Test("A base URL's password never appears in an invalid-URL error")
    func baseURLPasswordNotInError() async throws {
        let base = try #require(URL(string: "https://key:base-secret@/v1"))
        do {
            _ = try EndpointRequestBuilder().makeRequest(for: Endpoint(path: "/m", method: .get), baseURL: base)
            Issue.record("expected a throw")
        } catch {
            #expect(error.kind == .invalidURL)
            #expect(!error.message.contains("base-secret"), "\(error.message)")
            #expect(!error.description.contains("base-secret"))
        }
    }

    @Test("An empty 2xx body for a model is a decoding error, not a crash")
    func emptyBodyForModel() async {
        let transport = CannedResponseTransport(cannedResponse: CannedResponse(data: Data(), statusCode: 204))
        await #expect {
            let _: Model = try await service(transport).request(
                to: Endpoint(path: "/m", method: .get), via: environment)
        } throws: { error in
            (error as? NetworkError)?.kind == .decodingFailed
        }
    }

    @Test("The token is added only when the endpoint requires auth, and only when one exists")
    func authorization() async throws {
        let transport = CannedResponseTransport(string: "{}", statusCode: 200)
        let service = service(transport)
        try await service.requestVoid(to: Endpoint(path: "/open", method: .get), via: environment)
        try await service.requestVoid(to: Endpoint(path: "/closed", method: .get, requiresAuth: true), via: environment)
        let noToken = self.service(transport, token: nil)
        try await noToken.requestVoid(to: Endpoint(path: "/closed", method: .get, requiresAuth: true), via: environment)
        let headers = transport.receivedRequests.map { $0.value(forHTTPHeaderField: "Authorization") }
        #expect(headers == [nil, "Bearer t0k3n", nil])
    }

    @Test("A custom auth service's header field and prefix are used")
    func customAuthHeader() async throws {
        struct APIKeyAuth: AuthServiceProtocol {
            var headerField: String { "X-API-Key" }
            var headerValuePrefix: String { "" }
            func loadAccessToken() async throws -> String? { "k-1" }
            func saveAccessToken(_ token: String) async throws {}
            func deleteAccessToken() async throws {}
        }
        let transport = CannedResponseTransport(string: "{}")
        let service = HTTPNetworkService(transport: transport, authService: APIKeyAuth())
        try await service.requestVoid(to: Endpoint(path: "/x", method: .get, requiresAuth: true), via: environment)
        #expect(transport.receivedRequests.first?.value(forHTTPHeaderField: "X-API-Key") == "k-1")
        #expect(transport.receivedRequests.first?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test("A failing auth service is a typed error and nothing is sent")
    func failingAuth() async {
        struct BrokenAuth: AuthServiceProtocol {
            struct Broken: Error {}
            func loadAccessToken() async throws -> String? { throw Broken() }
            func saveAccessToken(_ token: String) async throws {}
            func deleteAccessToken() async throws {}
        }
        let transport = CannedResponseTransport(string: "{}")
        await #expect {
            try await HTTPNetworkService(transport: transport, authService: BrokenAuth())
                .requestVoid(to: Endpoint(path: "/x", method: .get, requiresAuth: true), via: environment)
        } throws: { error in
            (error as? NetworkError)?.kind == .authorizationFailed
        }
        #expect(transport.receivedRequests.isEmpty)
    }

    @Test(
        "Cancelled while the auth service fetches the token: CancellationError (not .authorizationFailed), nothing sent",
        arguments: [false, true])
    func cancelledDuringAuthorization(throwsURLError: Bool) async {
        /// Fetches its token slowly (a token service over the network); cancelled, it throws what
        /// its waiting throws: `CancellationError`, or a URL loading system's `URLError.cancelled`.
        struct SlowAuth: AuthServiceProtocol {
            let throwsURLError: Bool
            let started: Locked<Bool>
            func loadAccessToken() async throws -> String? {
                started.withLock { $0 = true }
                do {
                    try await Task.sleep(nanoseconds: 120_000_000_000)
                } catch {
                    if throwsURLError { throw URLError(.cancelled) }
                    throw error
                }
                return "late"
            }
            func saveAccessToken(_ token: String) async throws {}
            func deleteAccessToken() async throws {}
        }
        let started = Locked(false)
        let transport = CannedResponseTransport(string: "{}")
        let service = HTTPNetworkService(
            transport: transport, authService: SlowAuth(throwsURLError: throwsURLError, started: started))
        let environment = self.environment
        let task = Task {
            try await service.requestVoid(to: Endpoint(path: "/x", method: .get, requiresAuth: true), via: environment)
        }
        while !started.withLock({ $0 }) { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(transport.receivedRequests.isEmpty)
    }

    @Test("A body that cannot be encoded: the error names the path on one printable line (a path with CR/LF)")
    func encodingErrorPathEscaped() async {
        let transport = CannedResponseTransport(string: "{}")
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let endpoint = Endpoint(
            path: "/x\r\nX-Forged: 1", method: .post, body: ["v": EndpointAnyEncodable(Double.nan)])
        await #expect {
            try await service.requestVoid(to: endpoint, via: environment)
        } throws: { error in
            guard let error = error as? NetworkError else { return false }
            return !error.message.contains { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
                && error.message.contains("X-Forged")
        }
        #expect(transport.receivedRequests.isEmpty)
    }

    @Test("The logger sees request and response with credentials redacted")
    func logsRedacted() async throws {
        let logger = RecordingLogger()
        let transport = CannedResponseTransport(
            cannedResponse: CannedResponse(
                string: #"{"token":"RESP-SECRET","id":1}"#, headerFields: ["Set-Cookie": "sid=COOKIE-SECRET"]))
        let service = service(transport, token: "BEARER-SECRET", logger: logger)
        try await service.requestVoid(
            to: Endpoint(
                path: "/signIn", method: .post, query: [URLQueryItem(name: "api_key", value: "QUERY-SECRET")],
                body: ["password": EndpointAnyEncodable("PW-SECRET"), "username": EndpointAnyEncodable("alice")],
                requiresAuth: true),
            via: environment)
        let records = logger.records
        #expect(records.map(\.event) == [.request, .response])
        let everything = records.map { "\($0) \($0.headers) \($0.bodyExcerpt ?? "") \($0.url)" }.joined()
        for secret in ["BEARER-SECRET", "RESP-SECRET", "COOKIE-SECRET", "QUERY-SECRET", "PW-SECRET"] {
            #expect(!everything.contains(secret), "\(secret) leaked into the log")
        }
        #expect(records[0].headers["Authorization"] == "Bearer <redacted>")
        #expect(records[0].bodyExcerpt?.contains("alice") == true)
        #expect(records[1].statusCode == 200)
        #expect(records[1].duration != nil)
    }

    @Test("A transport failure is wrapped with its code; custom errors pass through")
    func transportFailures() async {
        struct Failing: HTTPTransportProtocol {
            let error: any Error
            func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) { throw error }
        }
        struct Custom: Error {}
        await #expect {
            try await HTTPNetworkService(
                transport: Failing(error: TransportError(.timedOut, url: nil, message: "slow"))
            )
            .requestVoid(to: Endpoint(path: "/x", method: .get), via: environment)
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.timedOut)
        }
        await #expect(throws: Custom.self) {
            try await HTTPNetworkService(transport: Failing(error: Custom()))
                .requestVoid(to: Endpoint(path: "/x", method: .get), via: environment)
        }
        await #expect(throws: CancellationError.self) {
            try await HTTPNetworkService(transport: Failing(error: URLError(.cancelled)))
                .requestVoid(to: Endpoint(path: "/x", method: .get), via: environment)
        }
    }
}
