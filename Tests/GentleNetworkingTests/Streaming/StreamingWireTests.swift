import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a streamed exchange produced: the items before the end, and the error it ended with.
struct StreamOutcome<Item: Sendable>: Sendable {
    var items: [Item] = []
    var error: (any Error)?
}

/// Runs `start` and iterates what it returns, wherever the failure comes (establishing the
/// stream or mid-body): a transport that streams natively fails mid-body, one that reads the
/// whole body first fails before.
func outcome<S: AsyncSequence & Sendable>(_ start: () async throws -> S) async -> StreamOutcome<S.Element>
where S.Element: Sendable {
    var result = StreamOutcome<S.Element>()
    do {
        for try await item in try await start() { result.items.append(item) }
    } catch {
        result.error = error
    }
    return result
}

@Suite("Streaming over real sockets: Server-Sent Events, lines and JSON Lines on every transport")
struct StreamingWireTests {
    func environment(_ server: LoopbackServer) -> DefaultAPIEnvironment {
        DefaultAPIEnvironment(baseURL: server.baseURL)
    }

    func get(_ path: String, auth: Bool = false) -> Endpoint {
        Endpoint(path: path, method: .get, requiresAuth: auth)
    }

    @Test(
        "SSE split mid-line, mid-character and mid-CRLF arrives as whole events, with the token sent",
        arguments: TransportKind.all)
    func serverSentEvents(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        var scripted = LoopbackResponse.eventStream([])
        scripted.segments = [
            Data("data: Hel".utf8), Data("lo wor".utf8), Data("ld\r".utf8), Data("\n\r\nid: 2\ndata: caf".utf8),
            Data([0xC3]), Data([0xA9, 0x0A, 0x0A]), Data(": keep-alive\n\nevent: done\ndata: [DONE]\n\n".utf8),
        ]
        let response = scripted
        server.route("GET", "/events") { _ in response }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService(token: "t0k3n"))
        let events = try await service.serverSentEvents(to: get("/events", auth: true), via: environment(server))
        var received: [ServerSentEvent] = []
        for try await event in events { received.append(event) }
        #expect(
            received == [
                ServerSentEvent(data: "Hello world"), ServerSentEvent(data: "café", id: "2"),
                ServerSentEvent(event: "done", data: "[DONE]", id: "2"),
            ])
        let sent = try #require(server.requests(path: "/events").first)
        #expect(sent.headers.contains { $0.name.lowercased() == "authorization" && $0.value == "Bearer t0k3n" })
        #expect(server.requests(path: "/events").count == 1)
    }

    @Test("JSON Lines decode one per line; a bad line names its number", arguments: TransportKind.all)
    func jsonLines(kind: TransportKind) async throws {
        struct Row: Decodable, Equatable, Sendable { let n: Int }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/rows") { _ in
            var response = LoopbackResponse(
                status: 200, body: Data("{\"n\":1}\n{\"n\":2}\r\n\n{\"n\":\"x\"}\n{\"n\":4}\n".utf8))
            response.chunked = true
            response.chunkSize = 5
            return response
        }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let result = await outcome {
            try await service.jsonLines(of: Row.self, to: get("/rows"), via: environment(server))
        }
        #expect(result.items == [Row(n: 1), Row(n: 2)])
        guard case StreamingError.undecodableLine(let line, _)? = result.error as? StreamingError else {
            Issue.record("expected undecodableLine, got \(String(describing: result.error))")
            return
        }
        #expect(line == 4)
    }

    @Test(
        "A JSON line that echoes the caller's token into an enum: the error names the line and the field, never the token",
        arguments: TransportKind.all)
    func jsonLinesScrubCredentials(kind: TransportKind) async throws {
        enum Status: String, Decodable, Sendable { case ok }
        struct Row: Decodable, Sendable { let status: Status }
        let token = "echoed-t0k3n-SEKRIT"
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/rows") { _ in
            LoopbackResponse(status: 200, body: Data("{\"status\":\"ok\"}\n{\"status\":\"\(token)\"}\n".utf8))
        }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService(token: token))
        let result = await outcome {
            try await service.jsonLines(of: Row.self, to: get("/rows", auth: true), via: environment(server))
        }
        #expect(result.items.count == 1)
        guard case StreamingError.undecodableLine(let line, let message)? = result.error as? StreamingError else {
            Issue.record("expected undecodableLine, got \(String(describing: result.error))")
            return
        }
        #expect(line == 2)
        #expect(message.contains("status") && !message.contains("SEKRIT"), "\(message)")
        #expect(!"\(String(describing: result.error))".contains("SEKRIT"))
        #expect(server.requests(path: "/rows").first?.header("Authorization") == "Bearer \(token)")
    }

    @Test("A non-2xx stream throws the same NetworkError as request, with its body", arguments: TransportKind.all)
    func statusError(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/busy") { _ in .json(#"{"error":"overloaded"}"#, status: 503) }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        do {
            _ = try await service.stream(to: get("/busy"), via: environment(server))
            Issue.record("expected a status error")
        } catch let error as NetworkError {
            #expect(error.kind == .httpStatusError(.serviceUnavailable))
            #expect(error.response?.bodyText?.contains("overloaded") == true)
        }
    }

    @Test("A connection dropped mid-stream is a transport error; the events before it arrive first")
    func droppedConnection() async throws {
        var kinds: [TransportKind: NetworkError.Kind] = [:]
        for kind in TransportKind.all {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/drop") { _ in
                .eventStream(["data: one\n\n", "data: two\n\n", "data: three\n\n"], closeAfter: 2)
            }
            let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
            let result = await outcome {
                try await service.serverSentEvents(to: get("/drop"), via: environment(server))
            }
            #expect(result.items.map(\.data) == ["one", "two"], "\(kind)")
            let error = try #require(result.error as? NetworkError, "\(kind): \(String(describing: result.error))")
            kinds[kind] = error.kind
        }
        #expect(Set(kinds.values).count == 1, "the same kind on every transport: \(kinds)")
    }

    @Test("An event above the limit is StreamingError.eventTooLarge on every transport", arguments: TransportKind.all)
    func eventLimit(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/big") { _ in
            .eventStream(["data: small\n\n", "data: " + String(repeating: "x", count: 5000) + "\n\n"])
        }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let result = await outcome {
            try await service.serverSentEvents(to: get("/big"), via: environment(server), maxEventBytes: 4096)
        }
        #expect(result.items.map(\.data) == ["small"])
        #expect(result.error as? StreamingError == .eventTooLarge(limit: 4096))
    }

    @Test(
        "Breaking out of the loop closes the connection at once: the server sees the hang-up",
        arguments: TransportKind.all)
    func breakClosesConnection(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/ticks") { _ in
            // 200 s in all: the consumer stops long before the server could finish, however slow the run.
            .eventStream((1...1000).map { "id: \($0)\ndata: tick \($0)\n\n" }, delay: 0.2)
        }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        var seen: [String] = []
        for try await event in try await service.serverSentEvents(to: get("/ticks"), via: environment(server)) {
            seen.append(event.data)
            if seen.count == 2 { break }
        }
        #expect(seen == ["tick 1", "tick 2"])
        let deadline = Date().addingTimeInterval(120)
        while server.clientHangUpCount == 0, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.clientHangUpCount == 1, "the server saw the client hang up")
        #expect(server.completedResponseCount == 0)

        // The same while the caller still holds the stream: leaving the loop is what ends it.
        let (held, _) = try await service.stream(to: get("/ticks"), via: environment(server))
        for try await _ in held.serverSentEvents() { break }
        while server.clientHangUpCount < 2, Date() < deadline.addingTimeInterval(20) {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(server.clientHangUpCount == 2, "the server saw the second hang-up while the stream was held")
        withExtendedLifetime(held) {}
    }

    @Test(
        "Cancelling the consuming task ends the stream with CancellationError and closes the connection",
        arguments: TransportKind.all)
    func cancellation(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/slow") { _ in .eventStream(["data: first\n\n", "data: late\n\n"], delay: 600) }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let received = Locked<[String]>([])
        let task = Task { () -> (any Error)? in
            do {
                for try await event in try await service.serverSentEvents(to: get("/slow"), via: environment(server)) {
                    received.withLock { $0.append(event.data) }
                }
                return nil
            } catch {
                return error
            }
        }
        let deadline = Date().addingTimeInterval(120)
        while received.current.isEmpty, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        let started = Date()
        task.cancel()
        let error = await task.value
        #expect(Date().timeIntervalSince(started) < 300, "no wait for the 600 s pause (loose: a starved run is slow)")
        #expect(received.current == ["first"])
        #expect(error is CancellationError, "\(String(describing: error))")
        while server.clientHangUpCount == 0, Date() < deadline.addingTimeInterval(30) {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(server.clientHangUpCount == 1)
    }

    @Test("RetryTransport retries establishing a stream (503 then 200); ReauthTransport refreshes on a 401")
    func decorators() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let calls = Locked(0)
        server.route("GET", "/flaky") { _ in
            let call = calls.increment()
            return call == 1 ? .status(503) : .eventStream(["data: ok\n\n"])
        }
        server.route("GET", "/private") { request in
            let token = request.headers.first { $0.name.lowercased() == "authorization" }?.value
            return token == "Bearer fresh" ? .eventStream(["data: secret\n\n"]) : .status(401)
        }
        let clock = RecordingClock()
        let retrying = RetryTransport(inner: try TransportKind.curl.make(), clock: clock.clock, budget: .unlimited())
        let (body, response) = try await retrying.stream(for: URLRequest(url: server.url("/flaky")))
        #expect(response.statusCode == 200)
        var events: [String] = []
        for try await event in body.serverSentEvents() { events.append(event.data) }
        #expect(events == ["ok"])
        #expect(server.requests(path: "/flaky").count == 2)
        #expect(clock.recordedDelays.count == 1)

        let auth = InMemoryAuthService(token: "stale")
        let reauth = ReauthTransport(inner: try TransportKind.curl.make(), authService: auth) {
            try await auth.saveAccessToken("fresh")
        }
        let request = try await auth.authorize(URLRequest(url: server.url("/private")))
        let (privateBody, privateResponse) = try await reauth.stream(for: request)
        #expect(privateResponse.statusCode == 200)
        var secrets: [String] = []
        for try await event in privateBody.serverSentEvents() { secrets.append(event.data) }
        #expect(secrets == ["secret"])
        #expect(server.requests(path: "/private").count == 2)
        #expect(reauth.refreshCount == 1)
    }
}
