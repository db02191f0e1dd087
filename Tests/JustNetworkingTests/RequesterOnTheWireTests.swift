import Foundation
import GentleNetworking
import GentleNetworkingTesting
import JustNetworking
import Testing

/// Both requesters (URLSession and TransportRequester) against the loopback server: what the
/// server received, and what the callback was given, on which queue. The routers here carry the
/// server's URL, so none of these tests touch the global base URL.
@Suite("Requesters on the wire (URLSession and TransportRequester)")
struct RequesterOnTheWireTests {
    @Test(
        "The server receives the route's path and method", arguments: RequesterKind.allCases,
        JustNetworking.HTTPMethod.allCases)
    func pathAndMethod(kind: RequesterKind, method: JustNetworking.HTTPMethod) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/api/user/12") { _ in .status(204) }
        let marked = MarkedQueue()
        let request = RequestType<Void>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "api/user/12", method)))

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        #expect(delivery.error == nil)
        #expect(delivery.onResponseQueue)
        #expect(server.receivedRequests.map(\.method) == [method.rawValue])
        #expect(server.receivedRequests.map(\.target) == ["/api/user/12"])
    }

    @Test(
        "addURLParams keeps the URL's own query byte for byte and appends strictly encoded items",
        arguments: RequesterKind.allCases)
    func mergedQuery(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/items") { _ in .status(204) }
        let marked = MarkedQueue()
        // The query on the base URL (a route's path is all path, as in JustNetworking).
        let base = try #require(URL(string: server.url("/items").absoluteString + "?a=1&b=x%20y"))
        let factory = RequestFactory(
            router: FixedBaseRouter(base, ""), requestBuilder: addURLParams(["d": "a&b=c d", "c": "3"]))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(), checking: marked)

        #expect(delivery.error == nil)
        let received = try #require(server.requests(path: "/items").first)
        #expect(received.rawQuery == "a=1&b=x%20y&c=3&d=a%26b%3Dc%20d")
        #expect(received.queryValue("b") == "x y")
        #expect(received.queryValue("d") == "a&b=c d")
        #expect(server.receivedRequests.count == 1)
    }

    @Test(
        "A value interpolated into a route stays in the path on the wire: no query, no fragment, no decoded escape",
        arguments: RequesterKind.allCases)
    func interpolatedPath(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", prefix: "/files/") { _ in .status(204) }
        let cases = [
            ("report#1.pdf", "/files/report%231.pdf"), ("a?admin=1", "/files/a%3Fadmin=1"),
            ("..%2F..%2Fadmin", "/files/..%252F..%252Fadmin"),
        ]
        for (name, _) in cases {
            let marked = MarkedQueue()
            let request = RequestType<Void>(
                responseQueue: marked.queue,
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "files/\(name)")))
            let delivery = await deliver(request, via: kind.make(), checking: marked)
            #expect(delivery.error == nil, "\(name)")
        }
        #expect(server.receivedRequests.map(\.target) == cases.map(\.1))
    }

    @Test(
        "Headers from addHeaders arrive as set, replacing a value of the same name",
        arguments: RequesterKind.allCases)
    func headers(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/h") { _ in .status(204) }
        let marked = MarkedQueue()
        let factory = RequestFactory(
            router: FixedBaseRouter(server.baseURL, "h", .post),
            requestBuilder: compose(
                addHeaders(["x-trace": "first", "Accept": "text/plain"]),
                addHeaders(["X-Trace": "second", "Authorization": "Bearer abc"])))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(), checking: marked)

        #expect(delivery.error == nil)
        let received = try #require(server.requests(path: "/h").first)
        #expect(received.method == "POST")
        #expect(received.headerValues("X-Trace") == ["second"])
        #expect(received.header("Accept") == "text/plain")
        #expect(received.header("Authorization") == "Bearer abc")
    }

    @Test("A Decodable response is decoded by the JSONDecoder given", arguments: RequesterKind.allCases)
    func decodable(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/user/7") { _ in .json(#"{"id":"7","user_name":"Zoë"}"#) }
        struct SnakeUser: Decodable, Sendable, Equatable {
            let id: String
            let userName: String
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let marked = MarkedQueue()
        let request = RequestType<SnakeUser>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "user/7")), decoder: decoder)

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        #expect(delivery.value == SnakeUser(id: "7", userName: "Zoë"))
        #expect(delivery.onResponseQueue)
        #expect(server.requests(path: "/user/7").count == 1)
    }

    @Test("A body that does not decode delivers the DecodingError", arguments: RequesterKind.allCases)
    func decodingError(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/user/7") { _ in .json(#"{"id":7}"#) }
        let marked = MarkedQueue()
        let request = RequestType<User>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "user/7")))

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        #expect(delivery.error is DecodingError)
        #expect(delivery.onResponseQueue)
        #expect(server.requests(path: "/user/7").count == 1)
    }

    @Test(
        "A Void request succeeds on any 2xx and ignores the body", arguments: RequesterKind.allCases, [200, 201, 204])
    func void(kind: RequesterKind, status: Int) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("DELETE", "/user/7") { _ in status == 204 ? .status(204) : .text("not json", status: status) }
        let marked = MarkedQueue()
        let request = RequestType<Void>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "user/7", .delete)))

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        #expect(delivery.error == nil)
        #expect(server.requests(path: "/user/7").map(\.method) == ["DELETE"])
    }

    @Test("A custom parser gets the exact body, on the response queue", arguments: RequesterKind.allCases)
    func customParser(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/text") { _ in .text("héllo, wörld") }
        let marked = MarkedQueue()
        let parserRanOnQueue = Locked<Bool?>(nil)
        let request = RequestType<String>(
            responseQueue: marked.queue, requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "text"))
        ) { data in
            parserRanOnQueue.withLock { $0 = marked.isCurrent }
            return String(decoding: data, as: UTF8.self).uppercased()
        }

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        #expect(delivery.value == "HÉLLO, WÖRLD")
        #expect(parserRanOnQueue.current == true)
        #expect(delivery.onResponseQueue)
        #expect(server.requests(path: "/text").count == 1)
    }

    @Test("What the parser throws is delivered unchanged", arguments: RequesterKind.allCases)
    func parserError(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/p") { _ in .text("payload") }
        let marked = MarkedQueue()
        let request = RequestType<Int>(
            responseQueue: marked.queue, requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "p"))
        ) { data in
            throw ParserFailure(reason: String(decoding: data, as: UTF8.self))
        }

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        #expect(delivery.error as? ParserFailure == ParserFailure(reason: "payload"))
        #expect(delivery.onResponseQueue)
        #expect(server.requests(path: "/p").count == 1)
    }

    @Test(
        "A non-2xx status fails with the status, headers and exact body, without parsing",
        arguments: RequesterKind.allCases, [404, 409, 500])
    func unacceptableStatus(kind: RequesterKind, status: Int) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let body = #"{"error":"no such user","status":\#(status)}"#
        server.route("GET", "/user/404") { _ in
            .json(body, status: status, headers: [("X-Request-Id", "r-1")])
        }
        let marked = MarkedQueue()
        let parserCalls = Locked(0)
        let request = RequestType<String>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "user/404"))
        ) { _ in
            parserCalls.withLock { $0 += 1 }
            return "parsed"
        }

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        let error = try #require(delivery.error as? JustNetworkingError)
        guard case .unacceptableStatusCode(let statusCode, let headers, let receivedBody) = error else {
            Issue.record("expected unacceptableStatusCode, got \(error)")
            return
        }
        #expect(statusCode == status)
        #expect(receivedBody == Data(body.utf8))
        #expect(headers.header("Content-Type") == "application/json")
        #expect(headers.header("X-Request-Id") == "r-1")
        #expect(parserCalls.current == 0)
        #expect(delivery.onResponseQueue)
        #expect(server.requests(path: "/user/404").count == 1)
    }

    @Test("A transport failure is passed through unchanged", arguments: RequesterKind.allCases)
    func transportFailure(kind: RequesterKind) async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }  // refusing until the end
        let closedURL = refusing.baseURL
        let marked = MarkedQueue()
        let request = RequestType<Void>(
            responseQueue: marked.queue, requestFactory: RequestFactory(router: FixedBaseRouter(closedURL, "gone")))

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        let error = try #require(delivery.error)
        #expect(!(error is JustNetworkingError))
        switch kind {
        case .urlSession: #expect(error is URLError)
        case .transport: #expect(error is TransportError || error is URLError)
        }
        #expect(delivery.onResponseQueue)
    }

    @Test("The callback runs on the request's own queue, never the caller's", arguments: RequesterKind.allCases)
    func callbackQueue(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/q") { _ in .json(#"{"id":"1","name":"a"}"#) }
        let first = MarkedQueue(label: "first")
        let second = MarkedQueue(label: "second")
        let requester = kind.make()
        let factory = RequestFactory(router: FixedBaseRouter(server.baseURL, "q"))

        let onFirst = await deliver(
            RequestType<User>(responseQueue: first.queue, requestFactory: factory), via: requester, checking: first)
        let onSecond = await deliver(
            RequestType<User>(responseQueue: second.queue, requestFactory: factory), via: requester, checking: first)

        #expect(onFirst.value == User(id: "1", name: "a"))
        #expect(onFirst.onResponseQueue)
        #expect(onSecond.value == User(id: "1", name: "a"))
        #expect(!onSecond.onResponseQueue)
        #expect(server.requests(path: "/q").count == 2)
    }

    @Test("URLSession: a response that is not HTTP fails with notHTTPResponse, without parsing")
    func notHTTP() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [NonHTTPURLProtocol.self]
        let session = URLSession(configuration: configuration)
        let marked = MarkedQueue()
        let parserCalls = Locked(0)
        let request = RequestType<Void>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(
                router: FixedBaseRouter(try #require(URL(string: "http://nonhttp.invalid")), "x"))
        ) { _ in parserCalls.withLock { $0 += 1 } }

        let delivery = await deliver(request, via: session, checking: marked)

        #expect(delivery.error as? JustNetworkingError == .notHTTPResponse, "\(String(describing: delivery.error))")
        #expect(parserCalls.current == 0)
        #expect(delivery.onResponseQueue)
        #expect(NonHTTPURLProtocol.startedURLs.current.contains("http://nonhttp.invalid/x"))
    }

    @Test("URLSession: a URL that is not http or https is refused with invalidRequest before any load starts")
    func nonHTTPSchemeRefused() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [NonHTTPURLProtocol.self]
        let session = URLSession(configuration: configuration)
        let marked = MarkedQueue()
        let request = RequestType<Void>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(try #require(URL(string: "nonhttp://host")), "y")))

        let delivery = await deliver(request, via: session, checking: marked)

        guard case .invalidRequest(let reason) = delivery.error as? JustNetworkingError else {
            Issue.record("expected invalidRequest, got \(String(describing: delivery.error))")
            return
        }
        #expect(reason.contains("nonhttp"))
        #expect(delivery.onResponseQueue)
        #expect(!NonHTTPURLProtocol.startedURLs.current.contains("nonhttp://host/y"))
    }

    @Test(
        "A header name with CR/LF or an Authorization value with CR/LF fails with invalidRequest; nothing is sent",
        arguments: RequesterKind.allCases, HeaderAttack.allCases)
    func invalidHeader(kind: RequesterKind, attack: HeaderAttack) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/h") { _ in .status(204) }
        let marked = MarkedQueue()
        let factory = RequestFactory(
            router: FixedBaseRouter(server.baseURL, "h"),
            requestBuilder: compose(addHeaders(["Accept": "text/plain"]), addHeaders([attack.name: attack.value])))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(), checking: marked)

        guard case .invalidRequest(let reason) = delivery.error as? JustNetworkingError else {
            Issue.record("expected invalidRequest, got \(String(describing: delivery.error))")
            return
        }
        #expect(reason.contains(attack.shownName), "\(reason)")
        #expect(!reason.contains("secret"), "the message must not show the value: \(reason)")
        #expect(delivery.onResponseQueue)
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
        #expect(throws: JustNetworkingError.invalidRequest(reason: reason)) { try factory.makeURLRequest() }
    }

    @Test(
        "300 header fields, or one builder's 300 KiB value, fail with invalidRequest naming the limit; nothing is sent",
        arguments: RequesterKind.allCases, ["300 fields", "300 KiB value"])
    func oversizedHead(kind: RequesterKind, what: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/h") { _ in .status(204) }
        var fields: [String: String] = [:]
        if what == "300 fields" {
            for index in 0..<300 { fields["X-F\(index)"] = "1" }
        } else {
            fields["X-Large"] = String(repeating: "v", count: 300 << 10)
        }
        let marked = MarkedQueue()
        let factory = RequestFactory(router: FixedBaseRouter(server.baseURL, "h"), requestBuilder: addHeaders(fields))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(), checking: marked)

        guard case .invalidRequest(let reason) = delivery.error as? JustNetworkingError else {
            Issue.record("expected invalidRequest, got \(String(describing: delivery.error))")
            return
        }
        #expect(reason.contains("RequestValidator.maxRequest"), "\(reason)")
        #expect(!reason.contains("vvvv"), "the message must not show the value")
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test(
        "A builder that sets a method with CR/LF fails with invalidRequest; nothing is sent",
        arguments: RequesterKind.allCases)
    func invalidMethod(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let (factory, delivery) = await sendSettingMethod(
            "GET /h HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET", to: server, via: kind)

        guard case .invalidRequest(let reason) = delivery.error as? JustNetworkingError else {
            Issue.record("expected invalidRequest, got \(String(describing: delivery.error))")
            return
        }
        #expect(reason.contains("is not a valid HTTP method"), "\(reason)")
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0)
        #expect(throws: JustNetworkingError.invalidRequest(reason: reason)) { try factory.makeURLRequest() }
    }

    @Test("A builder's lowercase method goes out uppercased on both requesters", arguments: RequesterKind.allCases)
    func lowercaseMethod(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let (_, delivery) = await sendSettingMethod("patch", to: server, via: kind)

        #expect(delivery.error == nil, "\(String(describing: delivery.error))")
        #expect(server.receivedRequests.map(\.method) == ["PATCH"])
    }

    @Test(
        "A builder's Content-Length that contradicts the body fails with invalidRequest; one that agrees is sent once",
        arguments: RequesterKind.allCases)
    func contradictoryContentLength(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let (factory, refused) = await sendBuilt(to: server, via: kind) { request in
            request.httpMethod = "POST"
            request.httpBody = Data("hello world".utf8)
            request.setValue("5", forHTTPHeaderField: "Content-Length")
        }
        guard case .invalidRequest(let reason) = refused.error as? JustNetworkingError else {
            Issue.record("expected invalidRequest, got \(String(describing: refused.error))")
            return
        }
        #expect(reason.contains("Content-Length"), "\(reason)")
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
        #expect(throws: Never.self) { try factory.makeURLRequest() }

        let (_, sent) = await sendBuilt(to: server, via: kind) { request in
            request.httpMethod = "POST"
            request.httpBody = Data("hello".utf8)
            request.setValue("5", forHTTPHeaderField: "Content-Length")
        }
        #expect(sent.error == nil, "\(String(describing: sent.error))")
        let lengths = server.receivedRequests.map { $0.headers.filter { $0.name.lowercased() == "content-length" } }
        #expect(lengths.map { $0.map(\.value) } == [["5"]])
    }

    /// Sends a request to `/h` (answered 204) whose builder sets `method`, checking that the
    /// callback runs on the request's queue.
    private func sendSettingMethod(
        _ method: String, to server: LoopbackServer, via kind: RequesterKind
    ) async -> (RequestFactory, Delivery<Void>) {
        await sendBuilt(to: server, via: kind) { $0.httpMethod = method }
    }

    /// Sends a request to `/h` (answered 204) that `build` changes, checking that the callback
    /// runs on the request's queue.
    private func sendBuilt(
        to server: LoopbackServer, via kind: RequesterKind, _ build: @escaping @Sendable (inout URLRequest) -> Void
    ) async -> (RequestFactory, Delivery<Void>) {
        server.route(nil, "/h") { _ in .status(204) }
        let marked = MarkedQueue()
        let factory = RequestFactory(router: FixedBaseRouter(server.baseURL, "h")) { request in
            var request = request
            build(&request)
            return request
        }
        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: kind.make(), checking: marked)
        #expect(delivery.onResponseQueue)
        return (factory, delivery)
    }
}

/// The two header injections the validation tests try.
enum HeaderAttack: String, CaseIterable, Sendable, CustomStringConvertible {
    case nameWithCRLF
    case authorizationValueWithCRLF

    var description: String { rawValue }

    var name: String {
        switch self {
        case .nameWithCRLF: "X-Note\r\nX-Injected: 1"
        case .authorizationValueWithCRLF: "Authorization"
        }
    }

    var value: String {
        switch self {
        case .nameWithCRLF: "secret"
        case .authorizationValueWithCRLF: "Bearer secret\r\nX-Injected: 1"
        }
    }

    /// How the error message shows the name.
    var shownName: String {
        switch self {
        case .nameWithCRLF: #"X-Note\r\nX-Injected"#
        case .authorizationValueWithCRLF: "Authorization"
        }
    }
}

/// Answers `nonhttp:` URLs with a plain (non-HTTP) `URLResponse` and a body.
final class NonHTTPURLProtocol: URLProtocol {
    /// Every URL a load was started for.
    static let startedURLs = Locked<[String]>([])

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.scheme == "nonhttp" || request.url?.host == "nonhttp.invalid"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override func startLoading() {
        guard let url = request.url else { return }
        Self.startedURLs.withLock { $0.append(url.absoluteString) }
        let response = URLResponse(url: url, mimeType: "text/plain", expectedContentLength: 4, textEncodingName: nil)
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("body".utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

/// TransportRequester over GentleNetworking decorators, and its cancel handle.
@Suite("TransportRequester over a GentleNetworking stack")
struct TransportRequesterStackTests {
    @Test("Over RetryTransport, a 503 is retried and the retry's body is parsed")
    func retries() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(
            "GET", "/flaky", handler: LoopbackServer.sequence([.status(503), .json(#"{"id":"9","name":"b"}"#)]))
        let retryEvents = Locked(0)
        let requester = TransportRequester(
            transport: RetryTransport(
                inner: DefaultTransport.make(), policy: RetryPolicy(maxRetries: 2, baseDelay: 0, maxDelay: 0),
                onRetry: { _ in retryEvents.withLock { $0 += 1 } }))
        let marked = MarkedQueue()
        let request = RequestType<User>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "flaky")))

        let delivery = await deliver(request, via: requester, checking: marked)

        #expect(delivery.value == User(id: "9", name: "b"))
        #expect(server.requests(path: "/flaky").count == 2)
        #expect(retryEvents.current == 1)
    }

    @Test("Over RetryTransport, retries that run out surface the last status as unacceptableStatusCode")
    func retriesExhausted() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/down") { _ in .text("still down", status: 503) }
        let requester = TransportRequester(
            transport: RetryTransport(
                inner: DefaultTransport.make(), policy: RetryPolicy(maxRetries: 2, baseDelay: 0, maxDelay: 0)))
        let marked = MarkedQueue()
        let request = RequestType<Void>(
            responseQueue: marked.queue, requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "down"))
        )

        let delivery = await deliver(request, via: requester, checking: marked)

        guard case .unacceptableStatusCode(503, _, let body) = delivery.error as? JustNetworkingError else {
            Issue.record("expected a 503, got \(String(describing: delivery.error))")
            return
        }
        #expect(body == Data("still down".utf8))
        #expect(server.requests(path: "/down").count == 3)
    }

    @Test("Cancelling the task send returns delivers the cancellation once")
    func cancel() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        // The task is cancelled once the server holds the request, so the transfer is in flight:
        // by the handler if the task is already known, else right after `send` returns it.
        struct CancelState {
            var task: Task<Void, Never>?
            var arrived = false
        }
        let state = Locked(CancelState())
        server.route("GET", "/slow") { _ in
            state.withLock { state in
                state.arrived = true
                state.task?.cancel()
            }
            // Long (shutdown interrupts it): the cancel must end the call, not the answer.
            return LoopbackResponse.json("{}").with { $0.delayBeforeHeaders = 300 }
        }
        let marked = MarkedQueue()
        let request = RequestType<Void>(
            responseQueue: marked.queue, requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "slow"))
        )
        let requester = TransportRequester()

        let delivery = await withCheckedContinuation { continuation in
            let task = requester.send(request) { result in
                continuation.resume(returning: Delivery(result: result, onResponseQueue: marked.isCurrent))
            }
            state.withLock { state in
                state.task = task
                if state.arrived { task?.cancel() }
            }
        }

        #expect(delivery.error is CancellationError)
        #expect(delivery.onResponseQueue)
        #expect(server.requests(path: "/slow").count == 1)
    }
}
