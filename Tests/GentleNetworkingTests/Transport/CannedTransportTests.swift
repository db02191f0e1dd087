import Foundation
import GentleNetworking
import Testing

@Suite("Canned transports")
struct CannedTransportTests {
    func request(_ method: String, _ url: String) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        return request
    }

    @Test("CannedResponseTransport answers every request and records them")
    func fixedResponse() async throws {
        let transport = CannedResponseTransport(string: "hi", statusCode: 202, headerFields: ["A": "b"])
        let (data, response) = try await transport.data(for: request("PUT", "https://h.example/x"))
        #expect(String(decoding: data, as: UTF8.self) == "hi")
        #expect(response.statusCode == 202)
        #expect(response.value(forHTTPHeaderField: "A") == "b")
        #expect(response.url?.absoluteString == "https://h.example/x")
        #expect(transport.receivedRequests.count == 1)
    }

    @Test("Routes match by method and exact path, host, or regex")
    func routing() async throws {
        let transport = CannedRoutesTransport(routes: [
            CannedRoute(pattern: RequestPattern(method: .get, path: "/a"), response: CannedResponse(string: "exact")),
            CannedRoute(
                pattern: RequestPattern(method: .post, pathRegex: "^/api/model/\\d+$"),
                response: CannedResponse(string: "regex")),
            CannedRoute(
                pattern: RequestPattern(method: .get, host: "other.example", path: "/b"),
                response: CannedResponse(string: "host")),
            CannedRoute(
                pattern: RequestPattern(method: .get, hostRegex: "^cdn\\d\\.example$", pathRegex: "^/img/"),
                response: CannedResponse(string: "hostRegex")),
        ])
        func body(_ method: String, _ url: String) async throws -> String {
            String(decoding: try await transport.data(for: request(method, url)).0, as: UTF8.self)
        }
        #expect(try await body("GET", "https://h.example/a?x=1") == "exact")
        #expect(try await body("POST", "https://h.example/api/model/42") == "regex")
        #expect(try await body("GET", "https://OTHER.example/b") == "host")
        #expect(try await body("GET", "https://cdn7.example/img/1.png") == "hostRegex")
        await #expect(throws: CannedRoutesTransportError.noMatch) { try await body("GET", "https://h.example/b") }
        await #expect(throws: CannedRoutesTransportError.noMatch) {
            try await body("POST", "https://h.example/api/model/x")
        }
        await #expect(throws: CannedRoutesTransportError.noMatch) { try await body("DELETE", "https://h.example/a") }
    }

    @Test("First match wins by default; requireUniqueMatch reports ambiguity")
    func modes() async throws {
        let routes = [
            CannedRoute(pattern: RequestPattern(method: .get, path: "/a"), response: CannedResponse(string: "1")),
            CannedRoute(
                pattern: RequestPattern(method: .get, pathRegex: "^/a$"), response: CannedResponse(string: "2")),
        ]
        let first = try await CannedRoutesTransport(routes: routes).data(for: request("GET", "https://h/a"))
        #expect(String(decoding: first.0, as: UTF8.self) == "1")
        await #expect(throws: CannedRoutesTransportError.ambiguousMatch(count: 2)) {
            try await CannedRoutesTransport(routes: routes, mode: .requireUniqueMatch).data(
                for: request("GET", "https://h/a"))
        }
    }

    @Test("An invalid regex matches nothing instead of crashing")
    func invalidRegex() {
        #expect(!RequestPattern(method: .get, pathRegex: "([").matches(request("GET", "https://h/(")))
    }

    @Test("An impossible status is CannedResponse.Error.failedToCreateHTTPURLResponse, from both transports")
    func impossibleStatus() async {
        await #expect(throws: CannedResponse.Error.failedToCreateHTTPURLResponse) {
            try await CannedResponseTransport(string: "", statusCode: -1).data(for: request("GET", "https://h/a"))
        }
        let routes = CannedRoutesTransport(routes: [
            CannedRoute(
                pattern: RequestPattern(pathRegex: "^/a$"), response: CannedResponse(string: "", statusCode: 1000))
        ])
        await #expect(throws: CannedResponse.Error.failedToCreateHTTPURLResponse) {
            try await routes.data(for: request("GET", "https://h/a"))
        }
        #expect(throws: CannedResponse.Error.failedToCreateHTTPURLResponse) {
            try CannedResponse(data: Data(), statusCode: 99).makeResponse(url: URL(string: "https://h/a")!)
        }
    }

    @Test("makeResponse(url:) carries the status, version and headers")
    func makeResponseURL() throws {
        let canned = CannedResponse(string: "x", statusCode: 201, headerFields: ["ETag": "\"v1\""])
        let response = try canned.makeResponse(url: URL(string: "https://h.example/new")!)
        #expect(response.statusCode == 201)
        #expect(response.url?.absoluteString == "https://h.example/new")
        #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        let route = CannedRoute(pattern: RequestPattern(path: "/new"), response: canned)
        #expect(route.pattern == RequestPattern(path: "/new"))
        #expect(route.response.statusCode == 201)
    }

    @Test("A request without a URL is missingRequestURL, and the seed's catch forms catch the errors")
    func seedErrorForms() async {
        var noURL = URLRequest(url: URL(string: "https://h/a")!)
        noURL.url = nil
        await #expect(throws: CannedResponseTransport.Error.missingRequestURL) {
            try await CannedResponseTransport(string: "").data(for: noURL)
        }
        let routes = CannedRoutesTransport(
            routes: [
                CannedRoute(pattern: RequestPattern(pathRegex: "^/a"), response: CannedResponse(string: "1")),
                CannedRoute(pattern: RequestPattern(pathRegex: "^/a$"), response: CannedResponse(string: "2")),
            ], mode: CannedRoutesTransport.Mode.requireUniqueMatch)
        await #expect(throws: CannedRoutesTransport.Error.missingRequestURL) { try await routes.data(for: noURL) }
        var caught: [String] = []
        for path in ["/b", "/a"] {
            do {
                _ = try await routes.data(for: request("GET", "https://h" + path))
            } catch CannedRoutesTransport.Error.noMatch {
                caught.append("noMatch")
            } catch CannedRoutesTransport.Error.ambiguousMatch(let count) {
                caught.append("ambiguous \(count)")
            } catch {
                caught.append("other \(error)")
            }
        }
        #expect(caught == ["noMatch", "ambiguous 2"])
    }

    @Test("Origins compare scheme, host and port, with default ports")
    func origins() {
        #expect(Origin.isSameOrigin(URL(string: "https://a.example/x"), URL(string: "https://A.example:443/y")))
        #expect(!Origin.isSameOrigin(URL(string: "https://a.example/"), URL(string: "http://a.example/")))
        #expect(!Origin.isSameOrigin(URL(string: "http://a.example:8080/"), URL(string: "http://a.example:8081/")))
        #expect(!Origin.isSameOrigin(URL(string: "https://a.example/"), URL(string: "https://b.example/")))
    }
}

@Suite("Canned transports stream canned chunks, with delays, for users' unit tests")
struct CannedStreamingTests {
    private let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://api.example.com"))

    @Test("A chunked canned response streams Server-Sent Events split mid-line; data(for:) gets the joined body")
    func serverSentEvents() async throws {
        let canned = CannedResponse(
            chunks: [Data("data: Hel".utf8), Data(), Data("lo\n\nid: 7\nda".utf8), Data("ta: two\n\n".utf8)],
            delay: 0.01, headerFields: ["Content-Type": "text/event-stream"])
        #expect(canned.chunks.count == 3, "empty pieces are dropped")
        let transport = CannedResponseTransport(cannedResponse: canned)
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        var events: [ServerSentEvent] = []
        for try await event in try await service.serverSentEvents(
            to: Endpoint(path: "/events", method: .get), via: environment)
        {
            events.append(event)
        }
        #expect(events == [ServerSentEvent(data: "Hello"), ServerSentEvent(data: "two", id: "7")])
        let (body, _) = try await transport.data(for: URLRequest(url: try #require(URL(string: "https://h/x"))))
        #expect(String(decoding: body, as: UTF8.self) == "data: Hello\n\nid: 7\ndata: two\n\n")
        #expect(transport.receivedRequests.count == 2)
    }

    @Test("A route streams its chunks in order; the stream sees each chunk as given")
    func routes() async throws {
        let transport = CannedRoutesTransport(routes: [
            CannedRoute(
                pattern: RequestPattern(method: .get, path: "/lines"),
                response: CannedResponse(chunks: [Data("{\"n\":1}\n".utf8), Data("{\"n\":2}\n".utf8)]))
        ])
        let (stream, response) = try await transport.stream(
            for: URLRequest(url: try #require(URL(string: "https://api.example.com/lines"))))
        #expect(response.statusCode == 200)
        var chunks: [String] = []
        for try await chunk in stream { chunks.append(String(decoding: chunk, as: UTF8.self)) }
        #expect(chunks == ["{\"n\":1}\n", "{\"n\":2}\n"])
        await #expect(throws: CannedRoutesTransport.Error.noMatch) {
            _ = try await transport.stream(for: URLRequest(url: try #require(URL(string: "https://api.example.com/x"))))
        }
    }

    @Test("Cancelling the consuming task stops a long delay at once; odd delays never wait forever")
    func cancellation() async throws {
        let transport = CannedResponseTransport(
            cannedResponse: CannedResponse(chunks: [Data("a".utf8), Data("b".utf8)], delay: 600))
        let task = Task { () -> (any Error)? in
            do {
                let (stream, _) = try await transport.stream(for: URLRequest(url: URL(fileURLWithPath: "/x")))
                for try await _ in stream {}
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        let started = Date()
        task.cancel()
        let error = await task.value
        #expect(error is CancellationError, "\(String(describing: error))")
        #expect(Date().timeIntervalSince(started) < 200)  // loose for a starved run
        for odd in [-1, .nan, .infinity] {
            #expect(CannedResponse(chunks: [Data("x".utf8)], delay: odd).chunkDelay == 0)
        }
    }
}
