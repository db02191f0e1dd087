import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// Records each ``TokenInvalidationHandler`` call, with what the server had seen by then.
final class InvalidationRecorder: TokenInvalidationHandler, @unchecked Sendable {
    // @unchecked: `calls` is only touched while holding `lock`.
    private let lock = NSLock()
    private var calls: [Int] = []
    private let server: LoopbackServer

    init(server: LoopbackServer) { self.server = server }

    func handleInvalidToken() async {
        let seen = server.receivedRequests.count
        lock.withLock { calls.append(seen) }
    }

    /// The number of requests the server had received at each call.
    var requestsSeenAtEachCall: [Int] { lock.withLock { calls } }
}

/// The seed's service API: the invalidation handler, `requestVoid`'s result, environments with
/// `_baseURL` and `EndpointProtocol.from(_:jsonEncoder:)`. Over real sockets on every transport.
@Suite("HTTPNetworkService: the seed's API, on the wire")
struct SeedServiceAPITests {
    func service(
        _ kind: TransportKind, _ handler: InvalidationRecorder?, logger: any NetworkLogger = NoOpNetworkLogger()
    )
        throws -> HTTPNetworkService
    {
        HTTPNetworkService(
            transport: try kind.make(), authService: InMemoryAuthService(token: "t-1"),
            invalidationHandler: handler, logger: logger)
    }

    @Test("A 401 calls the invalidation handler once, after the response and before the throw")
    func invalidationOn401() async throws {
        for kind in TransportKind.all {
            // Logging on and off: the service has a fast path that skips building the response.
            for logger in [NoOpNetworkLogger() as any NetworkLogger, RecordingLogger()] {
                let server = try LoopbackServer()
                defer { server.shutdown() }
                server.route("GET", "/me") { _ in .text("expired", status: 401) }
                let handler = InvalidationRecorder(server: server)
                let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
                do {
                    try await service(kind, handler, logger: logger).requestVoid(
                        to: Endpoint(path: "/me", method: .get, requiresAuth: true), via: environment)
                    Issue.record("\(kind): a 401 did not throw")
                } catch NetworkError.httpStatusError(.unauthorized) {
                    #expect(handler.requestsSeenAtEachCall == [1], "\(kind), \(type(of: logger))")
                }
            }
        }
    }

    @Test(
        "A 401 from another origin (after a redirect there) calls no invalidation handler: request, requestVoid, stream",
        arguments: TransportKind.all)
    func foreign401DoesNotInvalidate(kind: TransportKind) async throws {
        let api = try LoopbackServer()
        defer { api.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        let elsewhere = other.url("/x").absoluteString
        api.route("GET", "/go") { _ in .redirect(to: elsewhere) }
        api.route("GET", "/own") { _ in .text("expired", status: 401) }
        other.route("GET", "/x") { _ in .text("who are you", status: 401) }
        let handler = InvalidationRecorder(server: api)
        let environment = DefaultAPIEnvironment(baseURL: api.baseURL)
        for logger in [NoOpNetworkLogger() as any NetworkLogger, RecordingLogger()] {
            let service = try service(kind, handler, logger: logger)
            let endpoint = Endpoint(path: "/go", method: .get, requiresAuth: true)
            await expectUnauthorized {
                let _: Model = try await service.request(to: endpoint, via: environment)
            }
            await expectUnauthorized { try await service.requestVoid(to: endpoint, via: environment) }
            await expectUnauthorized { _ = try await service.stream(to: endpoint, via: environment) }
        }
        #expect(other.requests(path: "/x").count == 6)
        #expect(other.requests(path: "/x").allSatisfy { $0.header("Authorization") == nil })
        #expect(handler.requestsSeenAtEachCall.isEmpty, "\(handler.requestsSeenAtEachCall)")
        // The API's own 401 still does.
        await expectUnauthorized {
            try await service(kind, handler).requestVoid(
                to: Endpoint(path: "/own", method: .get, requiresAuth: true), via: environment)
        }
        #expect(handler.requestsSeenAtEachCall.count == 1)
    }

    private func expectUnauthorized(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch NetworkError.httpStatusError(.unauthorized) {
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("No call for other statuses, for success, or for a transport failure")
    func noInvalidationOtherwise() async throws {
        for kind in TransportKind.all {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/forbidden") { _ in .text("no", status: 403) }
            server.route("GET", "/broken") { _ in .text("oops", status: 500) }
            server.route("GET", "/fine") { _ in .text("{}") }
            let handler = InvalidationRecorder(server: server)
            let service = try service(kind, handler)
            let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
            for path in ["/forbidden", "/broken", "/fine"] {
                _ = try? await service.requestVoid(to: Endpoint(path: path, method: .get), via: environment)
            }
            let refusing = try RefusingPort()
            defer { withExtendedLifetime(refusing) {} }  // refusing until the end
            let deadEnvironment = DefaultAPIEnvironment(baseURL: refusing.baseURL)
            _ = try? await service.requestVoid(to: Endpoint(path: "/x", method: .get), via: deadEnvironment)
            #expect(server.receivedRequests.count == 3, "\(kind)")
            #expect(handler.requestsSeenAtEachCall.isEmpty, "\(kind)")
        }
    }

    @Test("A ReauthTransport whose refresh fails: the handler is called once, for the one 401")
    func invalidationAfterFailedRefresh() async throws {
        struct RefreshDenied: Error {}
        for kind in TransportKind.all {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/me") { _ in .text("expired", status: 401) }
            let handler = InvalidationRecorder(server: server)
            let auth = InMemoryAuthService(token: "t-1")
            let transport = ReauthTransport(inner: try kind.make(), authService: auth) { throw RefreshDenied() }
            let service = HTTPNetworkService(transport: transport, authService: auth, invalidationHandler: handler)
            do {
                try await service.requestVoid(
                    to: Endpoint(path: "/me", method: .get, requiresAuth: true),
                    via: DefaultAPIEnvironment(baseURL: server.baseURL))
                Issue.record("\(kind): a 401 did not throw")
            } catch NetworkError.httpStatusError(.unauthorized) {
                #expect(transport.refreshCount == 1, "\(kind)")
                #expect(handler.requestsSeenAtEachCall == [1], "\(kind)")
            }
        }
    }

    @Test("requestVoid returns the 2xx status it got, and callers may ignore it")
    func requestVoidResult() async throws {
        for kind in TransportKind.all {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("DELETE", "/items/1") { _ in .status(204) }
            server.route("PUT", "/items/1") { _ in .text("{}", status: 202) }
            let service = try service(kind, nil)
            let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
            let deleted = try await service.requestVoid(
                to: Endpoint(path: "/items/1", method: .delete), via: environment)
            #expect(deleted == .success(code: 204), "\(kind)")
            #expect(deleted.statusCode == 204)
            try await service.requestVoid(to: Endpoint(path: "/items/1", method: .put), via: environment)
            #expect(server.receivedRequests.map(\.method) == ["DELETE", "PUT"], "\(kind)")
        }
    }

    @Test("An environment without a base URL: baseURL answers the placeholder, and nothing is sent")
    func unsetEnvironment() async throws {
        let unset = DefaultAPIEnvironment()
        #expect(unset._baseURL == nil)
        #expect(unset.baseURL == DefaultAPIEnvironment.unsetBaseURL)
        let server = try LoopbackServer()
        defer { server.shutdown() }
        // A seed-style conformer that provides only `_baseURL`.
        struct Unconfigured: APIEnvironmentProtocol { var _baseURL: URL? { nil } }
        for kind in TransportKind.all {
            for environment in [unset as any APIEnvironmentProtocol, Unconfigured()] {
                do {
                    try await service(kind, nil).requestVoid(to: Endpoint(path: "/x", method: .get), via: environment)
                    Issue.record("\(kind): a request without a base URL was sent")
                } catch let error as NetworkError {
                    #expect(error.kind == .missingBaseURL)
                }
            }
        }
        #expect(server.receivedRequests.isEmpty)
        // The placeholder passed as a base URL is refused too.
        #expect(throws: NetworkError.self) {
            try Endpoint(path: "/x", method: .get).from(DefaultAPIEnvironment.unsetBaseURL)
        }
    }

    @Test("DefaultAPIEnvironment is Equatable by base URL; a custom _baseURL conformer is used as is")
    func environments() async throws {
        let a = DefaultAPIEnvironment(baseURL: URL(string: "https://api.example.com"))
        #expect(a == DefaultAPIEnvironment(baseURL: URL(string: "https://api.example.com")))
        #expect(a != DefaultAPIEnvironment(baseURL: URL(string: "https://other.example.com")))
        #expect(a != DefaultAPIEnvironment())
        #expect(a.baseURL == URL(string: "https://api.example.com"))
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/v2/ping") { _ in .text("{}") }
        struct Staging: APIEnvironmentProtocol {
            let root: URL
            var _baseURL: URL? { root.appendingPathComponent("v2") }
        }
        try await service(.urlSession, nil).requestVoid(
            to: Endpoint(path: "/ping", method: .get), via: Staging(root: server.baseURL))
        #expect(server.receivedRequests.map(\.path) == ["/v2/ping"])
    }

    @Test("EndpointProtocol.from builds what the service sends: path, query, JSON body, headers")
    func endpointFrom() throws {
        let base = try #require(URL(string: "https://api.example.com/v1/"))
        let endpoint = Endpoint(
            path: "/users/7", method: .post, query: [URLQueryItem(name: "q", value: "a b&c")],
            body: ["name": EndpointAnyEncodable("Zoë"), "at": EndpointAnyEncodable(Date(timeIntervalSince1970: 0))])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let request = try endpoint.from(base, jsonEncoder: encoder)
        #expect(request.url?.absoluteString == "https://api.example.com/v1/users/7?q=a%20b%26c")
        #expect(request.httpMethod == "POST")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let json = try #require(
            request.httpBody.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: String] })
        #expect(json == ["name": "Zoë", "at": "1970-01-01T00:00:00Z"])
        // The same request as the builder makes for an environment with that base URL.
        let built = try EndpointRequestBuilder(jsonEncoder: encoder).makeRequest(
            for: endpoint, in: DefaultAPIEnvironment(baseURL: base))
        #expect(built.url == request.url)
        #expect(built.allHTTPHeaderFields == request.allHTTPHeaderFields)
        // Nothing but http(s).
        #expect(throws: NetworkError.self) {
            try Endpoint(path: "x", method: .get).from(URL(fileURLWithPath: "/etc"))
        }
    }

    @Test("The default decoder reads ISO 8601 dates with and without fractional seconds, as the seed's")
    func defaultDecoderDates() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/events") { _ in
            .text(#"[{"at":"2024-01-01T12:34:56Z"},{"at":"2024-01-01T12:34:56.789Z"}]"#)
        }
        server.route("GET", "/epoch") { _ in .text(#"[{"at":1704112496}]"#) }
        struct Event: Decodable { let at: Date }
        let service = try service(.urlSession, nil)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let events: [Event] = try await service.requestModels(
            to: Endpoint(path: "/events", method: .get), via: environment)
        #expect(events.map(\.at.timeIntervalSince1970) == [1_704_112_496, 1_704_112_496.789])
        // A number is not an ISO 8601 date: a typed decoding error, not a guess.
        await #expect {
            let _: [Event] = try await service.requestModels(
                to: Endpoint(path: "/epoch", method: .get), via: environment)
        } throws: { ($0 as? NetworkError)?.kind == .decodingFailed }
        // A decoder of the caller's own is used as given.
        let plain = HTTPNetworkService(
            transport: try TransportKind.urlSession.make(), authService: InMemoryAuthService(),
            jsonDecoder: JSONDecoder())
        let epoch: [Event] = try await plain.requestModels(to: Endpoint(path: "/epoch", method: .get), via: environment)
        #expect(epoch.first?.at == Date(timeIntervalSinceReferenceDate: 1_704_112_496))
    }
}
