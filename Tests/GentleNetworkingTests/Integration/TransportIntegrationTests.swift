import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// The shared integration suite: every test runs once per real transport (URLSessionTransport,
/// and CurlTransport on Linux) against the loopback server, and asserts what the server saw.
@Suite("Every real transport on the wire (URLSessionTransport and CurlTransport)")
struct TransportIntegrationTests {
    @Test("The server receives the method, headers, query and JSON body", arguments: TransportKind.all)
    func requestOnTheWire(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("PUT", "/api/items/7") { _ in .json(#"{"id":7,"property":"saved"}"#) }
        let endpoint = Endpoint(
            path: "/api/items/7", method: .put,
            query: [URLQueryItem(name: "q", value: "a+b & c=d é"), URLQueryItem(name: "page", value: "2")],
            body: ["name": EndpointAnyEncodable("Zoë"), "count": EndpointAnyEncodable(3)],
            requiresAuth: true, headers: ["X-Trace": "t-1"])
        let model: Model = try await harness.service.request(to: endpoint, via: harness.environment)
        #expect(model.property == "saved")

        let received = try #require(harness.server.requests(path: "/api/items/7").first)
        #expect(received.method == "PUT")
        #expect(received.rawQuery == "q=a%2Bb%20%26%20c%3Dd%20%C3%A9&page=2")
        #expect(received.queryValue("q") == "a+b & c=d é")
        #expect(received.header("Accept") == "application/json")
        #expect(received.header("Content-Type") == "application/json")
        #expect(received.header("X-Trace") == "t-1")
        #expect(received.header("Authorization") == "Bearer token-1")
        #expect(received.jsonObject?["name"] as? String == "Zoë")
        #expect(received.jsonObject?["count"] as? Int == 3)
    }

    @Test("The token is sent only to endpoints that require auth", arguments: TransportKind.all)
    func tokenOnlyWhenRequired(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind, token: "only-when-asked")
        defer { harness.server.shutdown() }
        harness.server.route(nil, prefix: "/") { _ in .json("{}") }
        try await harness.service.requestVoid(to: Endpoint(path: "/public", method: .get), via: harness.environment)
        try await harness.service.requestVoid(
            to: Endpoint(path: "/private", method: .get, requiresAuth: true), via: harness.environment)
        #expect(harness.server.requests(path: "/public").map { $0.header("Authorization") } == [nil])
        #expect(
            harness.server.requests(path: "/private").map { $0.header("Authorization") } == ["Bearer only-when-asked"])
    }

    @Test(
        "Statuses map to results and typed errors, with the body kept",
        arguments: TransportKind.all, [200, 201, 204, 300, 304, 400, 401, 403, 404, 422, 429, 500, 502, 503])
    func statusMapping(kind: TransportKind, status: Int) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/s") { _ in
            status == 204 || status == 304 ? .status(status) : .json(#"{"status":\#(status)}"#, status: status)
        }
        do {
            try await harness.service.requestVoid(to: Endpoint(path: "/s", method: .get), via: harness.environment)
            #expect((200..<300).contains(status))
        } catch let error as NetworkError {
            #expect(!(200..<300).contains(status))
            #expect(error.kind == .httpStatusError(try #require(HTTPStatusError(statusCode: status))))
            #expect(error.response?.statusCode == status)
            if status != 304 {
                #expect(error.response?.bodyText == #"{"status":\#(status)}"#)
                #expect(error.response?.header("Content-Type") == "application/json")
            }
        }
        #expect(harness.server.requests(path: "/s").count == 1)
    }

    @Test("A body of the wrong shape is a decoding error with context", arguments: TransportKind.all)
    func decodingError(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/m") { _ in .json(#"{"id":"not-a-number","property":"x"}"#) }
        do {
            let _: Model = try await harness.service.request(
                to: Endpoint(path: "/m", method: .get), via: harness.environment)
            Issue.record("expected a decoding error")
        } catch let error as NetworkError {
            #expect(error.kind == .decodingFailed)
            #expect(error.decodingFailure?.codingPath == "id")
            #expect(error.decodingFailure?.modelType == "Model")
        }
    }

    @Test("Cancelling the task cancels the request at once", arguments: TransportKind.all)
    func cancellation(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/slow") { _ in LoopbackResponse.json("{}").with { $0.delayBeforeHeaders = 300 } }
        let service = harness.service
        let environment = harness.environment
        let task = Task {
            // An idle timeout of 600 s: a transport deaf to the cancel would wait for the server's
            // answer after 300 s, far above the bound below (which a starved run needs).
            try await service.requestVoid(
                to: Endpoint(path: "/slow", method: .get, timeoutInterval: 600), via: environment)
        }
        while harness.server.requests(path: "/slow").isEmpty {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let cancelledAt = Date()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Far below the server's 300 s; a ThreadSanitizer run can starve the pool for many
        // seconds (a 0.5 s timeout once took over 20 s to reach its test).
        #expect(Date().timeIntervalSince(cancelledAt) < 200, "the caller resumes long before the 300 s server delay")
        // On the wire: the client hangs up instead of waiting for the response.
        let deadline = Date().addingTimeInterval(120)
        while harness.server.clientHangUpCount == 0 && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(harness.server.clientHangUpCount == 1)
        #expect(harness.server.requests(path: "/slow").count == 1)
    }

    @Test("A task cancelled before sending never reaches the server", arguments: TransportKind.all)
    func cancelledBeforeSending(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        let service = harness.service
        let environment = harness.environment
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await service.requestVoid(to: Endpoint(path: "/never", method: .get), via: environment)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(harness.server.requests(path: "/never").isEmpty)
    }

    @Test("Credentials never cross to another origin on a redirect", arguments: TransportKind.all)
    func crossOriginRedirect(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind, token: "cross-origin-secret")
        defer { harness.server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        other.route("GET", "/landing") { _ in .json(#"{"id":1,"property":"elsewhere"}"#) }
        harness.server.route("GET", "/start") { _ in .redirect(to: other.url("/landing").absoluteString) }
        let endpoint = Endpoint(
            path: "/start", method: .get, requiresAuth: true,
            headers: ["Cookie": "session=cookie-secret", "Proxy-Authorization": "Basic proxy-secret"])
        let model: Model = try await harness.service.request(to: endpoint, via: harness.environment)
        #expect(model.property == "elsewhere")

        let first = try #require(harness.server.requests(path: "/start").first)
        #expect(first.header("Authorization") == "Bearer cross-origin-secret")
        let landed = try #require(other.requests(path: "/landing").first)
        #expect(landed.header("Authorization") == nil)
        #expect(landed.header("Cookie") == nil)
        #expect(landed.header("Proxy-Authorization") == nil)
        let everything = other.receivedRequests.flatMap(\.headers).map(\.value).joined()
        #expect(!everything.contains("secret"))
    }

    @Test("Credentials are kept on a same-origin redirect", arguments: TransportKind.all)
    func sameOriginRedirect(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind, token: "same-origin")
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/old") { _ in .redirect(to: "/new", status: 301) }
        harness.server.route("GET", "/new") { _ in .json("{}") }
        try await harness.service.requestVoid(
            to: Endpoint(path: "/old", method: .get, requiresAuth: true), via: harness.environment)
        #expect(harness.server.requests(path: "/new").first?.header("Authorization") == "Bearer same-origin")
    }

    @Test("A redirect loop is a clear error", arguments: TransportKind.all)
    func redirectLoop(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/a") { _ in .redirect(to: "/b") }
        harness.server.route("GET", "/b") { _ in .redirect(to: "/a") }
        await #expect {
            try await harness.service.requestVoid(to: Endpoint(path: "/a", method: .get), via: harness.environment)
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.tooManyRedirects)
        }
        #expect(harness.server.requests(path: "/a").count == 1)
        #expect(harness.server.requests(path: "/b").count == 1)
    }

    @Test("Too many redirects is a clear error", arguments: TransportKind.all)
    func tooManyRedirects(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", prefix: "/hop/") { request in
            let n = Int(request.path.dropFirst("/hop/".count)) ?? 0
            return .redirect(to: "/hop/\(n + 1)")
        }
        let service = HTTPNetworkService(
            transport: try kind.make(maxRedirects: 3),
            authService: InMemoryAuthService())
        await #expect {
            try await service.requestVoid(
                to: Endpoint(path: "/hop/0", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.tooManyRedirects)
        }
        #expect(server.receivedRequests.count == 4)
    }

    @Test("A 5 MB body travels intact in each direction", arguments: TransportKind.all)
    func largeBodies(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        let size = 5 * 1024 * 1024
        let payload = letterPattern(size)
        harness.server.route("POST", "/upload") { request in
            let text = (request.jsonObject?["blob"] as? String) ?? ""
            return .json(#"{"id":\#(text.utf8.count),"property":"\#(text.suffix(8))"}"#)
        }
        harness.server.route("GET", "/download") { _ in .json(#"{"id":1,"property":"\#(payload)"}"#) }
        let echoed: Model = try await harness.service.request(
            to: Endpoint(path: "/upload", method: .post, body: ["blob": EndpointAnyEncodable(payload)]),
            via: harness.environment)
        #expect(echoed.id == size)
        #expect(echoed.property == String(payload.suffix(8)))
        #expect(try #require(harness.server.requests(path: "/upload").first).body.count > size)

        let downloaded: Model = try await harness.service.request(
            to: Endpoint(path: "/download", method: .get), via: harness.environment)
        #expect(downloaded.property == payload)
    }

    @Test("Sequential requests reuse one kept-alive connection", arguments: TransportKind.all)
    func keepAlive(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/k") { _ in .json("{}") }
        // Off the shared pool, so no step waits out libcurl's 118 s idle limit for reuse.
        try await onDedicatedThread {
            for _ in 0..<5 {
                try await harness.service.requestVoid(to: Endpoint(path: "/k", method: .get), via: harness.environment)
            }
        }
        #expect(harness.server.requests(path: "/k").count == 5)
        #expect(Set(harness.server.requests(path: "/k").map(\.connectionID)).count == 1)
    }

    @Test("A connection closed mid-body is a transport error, never a truncated success", arguments: TransportKind.all)
    func closedMidBody(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/cut") { _ in
            LoopbackResponse.json(String(repeating: "x", count: 100_000)).with { $0.closeMidBody = true }
        }
        await #expect {
            try await harness.service.requestVoid(to: Endpoint(path: "/cut", method: .get), via: harness.environment)
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.truncatedBody)
        }
    }

    @Test("A malformed response is a transport error", arguments: TransportKind.all)
    func malformedResponse(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        harness.server.route("GET", "/garbage") { _ in .raw("NOT HTTP AT ALL\r\n\r\n") }
        await #expect {
            try await harness.service.requestVoid(
                to: Endpoint(path: "/garbage", method: .get), via: harness.environment)
        } throws: { error in
            guard case .transport = (error as? NetworkError)?.kind else { return false }
            return true
        }
    }

    @Test("Nothing listening is cannotConnect", arguments: TransportKind.all)
    func connectionRefused(kind: TransportKind) async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }  // refusing until the end
        let deadURL = refusing.baseURL
        let service = HTTPNetworkService(
            transport: try kind.make(), authService: InMemoryAuthService())
        await #expect {
            try await service.requestVoid(
                to: Endpoint(path: "/", method: .get), via: DefaultAPIEnvironment(baseURL: deadURL))
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.cannotConnect)
        }
    }

    @Test("A per-endpoint timeout is honoured", arguments: TransportKind.all)
    func timeout(kind: TransportKind) async throws {
        let harness = try LoopbackHarness(kind: kind)
        defer { harness.server.shutdown() }
        // 10 s, below the 60 s default a transport would fall back to without the endpoint's
        // timeout (the call would then succeed).
        harness.server.route("GET", "/stall") { _ in LoopbackResponse.json("{}").with { $0.delayBeforeHeaders = 10 } }
        await #expect {
            try await harness.service.requestVoid(
                to: Endpoint(path: "/stall", method: .get, timeoutInterval: 0.5), via: harness.environment)
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.timedOut)
        }
    }
}
