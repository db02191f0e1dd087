import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@Suite("EventSource over real sockets: resume with Last-Event-ID, retry:, 204, cancellation")
struct EventSourceWireTests {
    func environment(_ server: LoopbackServer) -> DefaultAPIEnvironment {
        DefaultAPIEnvironment(baseURL: server.baseURL)
    }

    @Test(
        "A dropped stream resumes from the last ID after the server's retry:, and a 204 ends it",
        arguments: TransportKind.all)
    func resume(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let connections = Locked(0)
        server.route("GET", "/feed") { _ in
            let number = connections.increment()
            switch number {
            // curl streams: the connection drops mid-body after two events. URLSessionTransport
            // reads the whole body first, so a drop would lose the events before it; there the
            // first stream ends cleanly after them.
            case 1:
                return kind == .curl
                    ? .eventStream(
                        ["retry: 600\n\n", "id: 1\ndata: one\n\n", "id: 2\ndata: two\n\n", "id: 3\ndata: lost\n\n"],
                        closeAfter: 3)
                    : .eventStream(["retry: 600\n\n", "id: 1\ndata: one\n\n", "id: 2\ndata: two\n\n"])
            // No `id:` before "three": the ID in force, 2, carries on (it was nil).
            case 2: return .eventStream(["data: three\n\n", "id: 4\ndata: four\n\n"])
            default: return .status(204)
            }
        }
        let clock = RecordingClock()
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService(token: "tok"))
        let source = service.eventSource(
            to: Endpoint(path: "/feed", method: .get, requiresAuth: true), via: environment(server), clock: clock.clock)
        var received: [String] = []
        var ids: [String?] = []
        for try await event in source {
            received.append(event.data)
            ids.append(event.id)
        }
        #expect(received == ["one", "two", "three", "four"])
        #expect(ids == ["1", "2", "2", "4"])
        let requests = server.requests(path: "/feed")
        #expect(requests.count == 3)
        func header(_ name: String, _ index: Int) -> String? {
            requests[index].headers.first { $0.name.lowercased() == name }?.value
        }
        #expect(header("last-event-id", 0) == nil)
        #expect(header("last-event-id", 1) == "2")
        #expect(header("last-event-id", 2) == "4")
        #expect((0..<3).allSatisfy { header("accept", $0) == "text/event-stream" })
        #expect((0..<3).allSatisfy { header("cache-control", $0) == "no-cache" }, "never answered from a cache")
        #expect((0..<3).allSatisfy { header("authorization", $0) == "Bearer tok" })
        // After the drop: the server's 600 ms; after the clean end: 600 ms again (progress was
        // made); each with the first reconnect's spread, 0.5 × the backoff's 0.5 s.
        #expect(clock.recordedDelays == [0.85, 0.85])
    }

    @Test(
        "An endpoint's own Last-Event-Id or accept, in any case, is the start, never sent beside the stream's",
        arguments: TransportKind.all)
    func callerHeaderSpellings(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let connections = Locked(0)
        server.route("GET", "/feed") { _ in
            connections.increment() == 1 ? .eventStream(["id: 5\ndata: five\n\n"]) : .status(204)
        }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let endpoint = Endpoint(
            path: "/feed", method: .get, headers: ["Last-Event-Id": "0", "accept": "application/json"])
        for try await _ in service.eventSource(to: endpoint, via: environment(server), clock: RecordingClock().clock) {}
        let requests = server.requests(path: "/feed")
        #expect(requests.count == 2)
        func values(_ name: String, _ index: Int) -> [String] {
            requests[index].headers.filter { $0.name.lowercased() == name }.map(\.value)
        }
        #expect(values("last-event-id", 0) == ["0"])
        // Before: the caller's `Last-Event-Id: 0` (set after `Last-Event-ID`, in sorted order)
        // replaced the stream's 5 on every reconnect; `accept` replaced `text/event-stream`.
        #expect(values("last-event-id", 1) == ["5"])
        #expect((0..<2).allSatisfy { values("accept", $0) == ["text/event-stream"] })
    }

    @Test(
        "A server sending retry: 0 and closing after each event is reconnected to after the 0.5 s floor",
        arguments: TransportKind.all)
    func retryFloor(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let connections = Locked(0)
        server.route("GET", "/feed") { _ in
            let number = connections.increment()
            return .eventStream(["retry: 0\nid: \(number)\ndata: e\(number)\n\n"])
        }
        let clock = RecordingClock()
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let source = service.eventSource(
            to: Endpoint(path: "/feed", method: .get), via: environment(server), clock: clock.clock)
        var received: [String] = []
        for try await event in source {
            received.append(event.data)
            if received.count == 4 { break }
        }
        #expect(received == ["e1", "e2", "e3", "e4"])
        #expect(server.requests(path: "/feed").count == 4)
        // The floor, plus the first reconnect's spread (0.5 × the backoff's 0.5 s).
        #expect(clock.recordedDelays == [0.75, 0.75, 0.75], "the server's retry: 0 waited the floor")
    }

    @Test("A status that is not retried ends the sequence with EventSourceFailure.status, after one request")
    func refused() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/feed") { _ in .status(403) }
        let service = HTTPNetworkService(transport: try TransportKind.curl.make(), authService: InMemoryAuthService())
        let clock = RecordingClock()
        await #expect(throws: EventSourceFailure.status(403)) {
            for try await _ in service.eventSource(
                to: Endpoint(path: "/feed", method: .get), via: environment(server), clock: clock.clock)
            {}
        }
        #expect(server.requests(path: "/feed").count == 1)
        #expect(clock.recordedDelays.isEmpty)
    }

    @Test("A server that keeps failing is retried with backoff, then the sequence gives up")
    func givesUp() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/feed") { _ in .status(503) }
        let service = HTTPNetworkService(transport: try TransportKind.curl.make(), authService: InMemoryAuthService())
        let clock = RecordingClock(randomUnit: 0.5)
        let policy = EventSourcePolicy(
            defaultReconnectionTime: 0.1, backoff: RetryPolicy(maxRetries: 2, baseDelay: 1, maxDelay: 10, jitter: .full)
        )
        await #expect(throws: EventSourceFailure.status(503)) {
            for try await _ in service.eventSource(
                to: Endpoint(path: "/feed", method: .get), via: environment(server), policy: policy, clock: clock.clock)
            {}
        }
        // The reconnection time plus full jitter at 0.5: 0.5 × 1 (the first's spread), 0.5 × 1,
        // 0.5 × 2.
        #expect(clock.recordedDelays == [0.6, 0.6, 1.1])
        #expect(server.requests(path: "/feed").count == 4)
    }

    @Test("Cancelling the task ends the sequence with CancellationError during a wait or a read")
    func cancellation() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/feed") { _ in .eventStream(["data: first\n\n", "data: never\n\n"], delay: 600) }
        let service = HTTPNetworkService(transport: try TransportKind.curl.make(), authService: InMemoryAuthService())
        let received = Locked<[String]>([])
        let task = Task { () -> (any Error)? in
            do {
                for try await event in service.eventSource(
                    to: Endpoint(path: "/feed", method: .get), via: environment(server))
                {
                    received.withLock { $0.append(event.data) }
                }
                return nil
            } catch {
                return error
            }
        }
        let deadline = Date().addingTimeInterval(120)
        while received.current.isEmpty, Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        task.cancel()
        #expect(await task.value is CancellationError)
        #expect(received.current == ["first"])
        while server.clientHangUpCount == 0, Date() < deadline.addingTimeInterval(30) {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(server.clientHangUpCount == 1)
        #expect(server.requests(path: "/feed").count == 1, "a cancelled source does not reconnect")
    }

    @Test(
        "A 503 with Retry-After: 20 is tried again after 20 s (the clock's), not the 3 s reconnection time",
        arguments: TransportKind.all)
    func retryAfterOnReconnect(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let connections = Locked(0)
        server.route("GET", "/feed") { _ in
            connections.increment() == 1
                ? LoopbackResponse(status: 503, headers: [("Retry-After", "20")]) : .status(204)
        }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        let clock = RecordingClock()
        let endpoint = Endpoint(path: "/feed", method: .get)
        for try await _ in service.eventSource(
            to: endpoint, via: DefaultAPIEnvironment(baseURL: server.baseURL), clock: clock.clock)
        {}
        #expect(server.requests(path: "/feed").count == 2)
        #expect(clock.recordedDelays.count == 1 && (clock.recordedDelays.first ?? 0) >= 20, "\(clock.recordedDelays)")
    }

    @Test(
        "Bytes that are not UTF-8 (a Latin-1 comment, a data line) are U+FFFD: the feed goes on, no reconnect",
        arguments: TransportKind.all)
    func invalidUTF8IsReplaced(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let connections = Locked(0)
        server.route("GET", "/feed") { _ in
            guard connections.increment() == 1 else { return .status(204) }
            var response = LoopbackResponse.eventStream([])
            response.segments = [
                Data(": caf".utf8) + Data([0xE9]) + Data("\n\ndata: ok\n\n".utf8),
                Data("data: a".utf8) + Data([0xFF]) + Data("b\n\n".utf8),
            ]
            return response
        }
        let service = HTTPNetworkService(transport: try kind.make(), authService: InMemoryAuthService())
        var received: [String] = []
        let endpoint = Endpoint(path: "/feed", method: .get)
        for try await event in service.eventSource(
            to: endpoint, via: DefaultAPIEnvironment(baseURL: server.baseURL), clock: RecordingClock().clock)
        {
            received.append(event.data)
        }
        #expect(received == ["ok", "a\u{FFFD}b"])
        #expect(server.requests(path: "/feed").count == 2)
    }

    @Test("Over the default service (which retries), an event source makes one connection per attempt of its own")
    func defaultServiceConnectsOncePerAttempt() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/feed") { _ in .status(503) }
        let policy = EventSourcePolicy(
            defaultReconnectionTime: 0, backoff: RetryPolicy(maxRetries: 1, baseDelay: 0, jitter: .disabled))
        let endpoint = Endpoint(path: "/feed", method: .get)
        func connections(_ service: HTTPNetworkService) async -> Int {
            let before = server.requests(path: "/feed").count
            do {
                for try await _ in service.eventSource(
                    to: endpoint, via: environment(server), policy: policy, clock: RecordingClock().clock)
                {}
            } catch {}
            return server.requests(path: "/feed").count - before
        }
        // The control: the bare transport, where only the event source's policy retries.
        let bare = await connections(
            HTTPNetworkService(transport: try TransportKind.curl.make(), authService: InMemoryAuthService()))
        let defaulted = await connections(HTTPNetworkService(authService: InMemoryAuthService()))
        #expect(bare >= 1)
        #expect(defaulted == bare, "RetryTransport must not add its own attempts under the event source's")
    }

    @Test("A refresh an event source's 401 starts is retried as any refresh is (the bypass is the connection's only)")
    func refreshDuringConnectRetries() async throws {
        struct Token: Decodable { let token: String }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/feed") { request in
            request.header("Authorization") == "Bearer new" ? .eventStream(["data: ok\n\n"]) : .status(401)
        }
        server.route(
            "GET", "/token",
            handler: LoopbackServer.sequence([
                LoopbackResponse.status(503).adding(header: "Retry-After", "0"), .json(#"{"token":"new"}"#),
            ]))
        let auth = InMemoryAuthService(token: "old")
        let refresher = HTTPNetworkService(
            transport: RetryTransport(
                inner: try TransportKind.curl.make(), policy: RetryPolicy(baseDelay: 0, jitter: .disabled)),
            authService: InMemoryAuthService())
        let environment = environment(server)
        let reauth = ReauthTransport(inner: try TransportKind.curl.make(), authService: auth) {
            let token: Token = try await refresher.request(to: Endpoint(path: "/token", method: .get), via: environment)
            try await auth.saveAccessToken(token.token)
        }
        let service = HTTPNetworkService(transport: reauth, authService: auth)
        var received: [String] = []
        for try await event in service.eventSource(
            to: Endpoint(path: "/feed", method: .get, requiresAuth: true), via: environment,
            clock: RecordingClock().clock)
        {
            received.append(event.data)
            break
        }
        #expect(received == ["ok"])
        #expect(server.requests(path: "/token").count == 2, "the refresh's 503 was retried")
        #expect(server.requests(path: "/feed").map { $0.header("Authorization") } == ["Bearer old", "Bearer new"])
    }
}
