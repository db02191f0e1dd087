import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

@Suite("RetryTransport")
struct RetryTransportTests {
    @Test("Backs off with exact, growing, capped delays, then returns the last response")
    func exactDelaysThenLastResponse() async throws {
        let clock = RecordingClock(randomUnit: 1)
        let inner = ScriptedTransport([.status(503, body: "busy")])
        let transport = RetryTransport(
            inner: inner, policy: RetryPolicy(maxRetries: 5, baseDelay: 0.5, maxDelay: 3, jitter: .full),
            clock: clock.clock)
        let (data, response) = try await transport.data(for: request())
        #expect(response.statusCode == 503)
        #expect(String(decoding: data, as: UTF8.self) == "busy")
        #expect(inner.sent.count == 6)
        #expect(clock.recordedDelays == [0.5, 1, 2, 3, 3])
    }

    @Test("Equal and decorrelated jitter produce their exact sequences for a fixed random source")
    func otherJitters() async throws {
        let equalClock = RecordingClock(randomUnit: 0)
        _ = try await RetryTransport(
            inner: ScriptedTransport([.status(500)]),
            policy: RetryPolicy(maxRetries: 4, baseDelay: 1, maxDelay: 5, jitter: .equal), clock: equalClock.clock
        ).data(for: request())
        #expect(equalClock.recordedDelays == [0.5, 1, 2, 2.5])

        let decorrelatedClock = RecordingClock(randomUnit: 1)
        _ = try await RetryTransport(
            inner: ScriptedTransport([.status(500)]),
            policy: RetryPolicy(maxRetries: 4, baseDelay: 1, maxDelay: 20, jitter: .decorrelated),
            clock: decorrelatedClock.clock
        ).data(for: request())
        #expect(decorrelatedClock.recordedDelays == [3, 9, 20, 20])
    }

    @Test("RetryPolicy(jitter: nil) backs off by exactly baseDelay * 2^attempt, capped, whatever the randomness")
    func noJitter() async throws {
        for unit in [0, 0.37, 0.99] {
            let clock = RecordingClock(randomUnit: unit)
            let policy = RetryPolicy(maxRetries: 5, baseDelay: 0.5, maxDelay: 3, jitter: nil)
            #expect(policy.jitter == .disabled)
            _ = try await RetryTransport(inner: ScriptedTransport([.status(503)]), policy: policy, clock: clock.clock)
                .data(for: request())
            #expect(clock.recordedDelays == [0.5, 1, 2, 3, 3], "random unit \(unit)")
        }
    }

    @Test("Recovers when a later attempt succeeds, and reports each retry")
    func recovers() async throws {
        let clock = RecordingClock(randomUnit: 0.5)
        let events = LockedEvents()
        let inner = ScriptedTransport([
            .status(503), .failure(TransportError(.connectionLost, url: nil, message: "")), .status(200, body: "ok"),
        ])
        let (data, _) = try await RetryTransport(
            inner: inner, policy: RetryPolicy(baseDelay: 1), clock: clock.clock, onRetry: { events.append($0) }
        ).data(for: request())
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(clock.recordedDelays == [0.5, 1])
        #expect(events.all.map(\.retryNumber) == [1, 2])
        #expect(events.all.first?.description == "retry 1 of GET /r after 0.500 s (status 503)")
    }

    @Test("Throws the last transport error when retries run out")
    func lastError() async {
        let inner = ScriptedTransport([.failure(TransportError(.timedOut, url: nil, message: "slow"))])
        await #expect {
            try await RetryTransport(inner: inner, policy: RetryPolicy(maxRetries: 2), clock: RecordingClock().clock)
                .data(for: request())
        } throws: { error in
            (error as? TransportError)?.code == .timedOut
        }
        #expect(inner.sent.count == 3)
    }

    @Test("401 and other client errors pass straight through")
    func noRetryOn4xx() async throws {
        let inner = ScriptedTransport([.status(401)])
        let (_, response) = try await RetryTransport(inner: inner, clock: RecordingClock().clock).data(for: request())
        #expect(response.statusCode == 401)
        #expect(inner.sent.count == 1)
    }

    @Test("Cancelling the task interrupts a backoff sleep at once")
    func cancellationInterruptsSleep() async throws {
        let inner = ScriptedTransport([.status(503)])
        let transport = RetryTransport(
            inner: inner, policy: RetryPolicy(maxRetries: 3, baseDelay: 600, maxDelay: 600, jitter: .equal))
        let task = Task { try await transport.data(for: request()) }
        while inner.sent.isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }
        try await Task.sleep(nanoseconds: 20_000_000)
        let cancelledAt = Date()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Loose for a starved run; a sleep that ignores the cancel lasts 300-600 s.
        #expect(Date().timeIntervalSince(cancelledAt) < 200, "far below the 300-600 s backoff")
        #expect(inner.sent.count == 1)
    }
}

final class LockedEvents: Sendable {
    private let events = Locked<[RetryEvent]>([])
    func append(_ event: RetryEvent) { events.withLock { $0.append(event) } }
    var all: [RetryEvent] { events.current }
}

@Suite("RetryTransport on the wire")
struct RetryTransportWireTests {
    func makeService(
        _ server: LoopbackServer, clock: RecordingClock, policy: RetryPolicy = RetryPolicy()
    )
        -> HTTPNetworkService
    {
        HTTPNetworkService(
            transport: RetryTransport(
                inner: URLSessionTransport(session: makeIsolatedSession()), policy: policy, clock: clock.clock),
            authService: InMemoryAuthService(token: "t"))
    }

    @Test("503, 503, 200: the server sees three identical requests and the caller gets the 200")
    func recoversOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(
            "GET", "/flaky",
            handler: LoopbackServer.sequence([.status(503), .status(503), .json(#"{"id":1,"property":"ok"}"#)]))
        let clock = RecordingClock(randomUnit: 1)
        let model: Model = try await makeService(server, clock: clock).request(
            to: Endpoint(path: "/flaky", method: .get, requiresAuth: true),
            via: DefaultAPIEnvironment(baseURL: server.baseURL))
        #expect(model.property == "ok")
        let seen = server.requests(path: "/flaky")
        #expect(seen.count == 3)
        #expect(Set(seen.map { $0.header("Authorization") ?? "" }) == ["Bearer t"])
        #expect(clock.recordedDelays == [0.5, 1])
    }

    @Test("Exhausted retries surface the typed status error with the last body")
    func exhaustedOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/down") { _ in .json(#"{"error":"down"}"#, status: 503) }
        await #expect {
            try await makeService(server, clock: RecordingClock(), policy: RetryPolicy(maxRetries: 2))
                .requestVoid(
                    to: Endpoint(path: "/down", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
        } throws: { error in
            (error as? NetworkError)?.kind == .httpStatusError(.serviceUnavailable)
                && (error as? NetworkError)?.response?.bodyText == #"{"error":"down"}"#
        }
        #expect(server.requests(path: "/down").count == 3)
    }

    @Test("POST is sent once, unless it carries an Idempotency-Key")
    func postIdempotency() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/orders") { _ in .status(503) }
        let service = makeService(server, clock: RecordingClock())
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        await #expect(throws: NetworkError.self) {
            try await service.requestVoid(to: Endpoint(path: "/orders", method: .post), via: environment)
        }
        #expect(server.requests(path: "/orders").count == 1)
        server.clearRecordedRequests()
        await #expect(throws: NetworkError.self) {
            try await service.requestVoid(
                to: Endpoint(path: "/orders", method: .post, headers: ["Idempotency-Key": "order-42"]), via: environment
            )
        }
        let retried = server.requests(path: "/orders")
        #expect(retried.count == 4)
        #expect(Set(retried.map { $0.header("Idempotency-Key") ?? "" }) == ["order-42"])
    }

    @Test("Retry-After from the server sets the delay; one above the cap is not waited for")
    func retryAfterOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(
            "GET", "/limited",
            handler: LoopbackServer.sequence([
                LoopbackResponse.status(429).adding(header: "Retry-After", "2"), .json("{}"),
            ]))
        server.route("GET", "/later") { _ in LoopbackResponse.status(503).adding(header: "Retry-After", "3600") }
        let clock = RecordingClock()
        let service = makeService(server, clock: clock)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        try await service.requestVoid(to: Endpoint(path: "/limited", method: .get), via: environment)
        #expect(clock.recordedDelays == [2])
        await #expect(throws: NetworkError.self) {
            try await service.requestVoid(to: Endpoint(path: "/later", method: .get), via: environment)
        }
        #expect(server.requests(path: "/later").count == 1)
        #expect(clock.recordedDelays == [2])
    }

    @Test("A connection dropped mid-body is retried and recovers")
    func droppedConnection() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(
            "GET", "/drop",
            handler: LoopbackServer.sequence([
                LoopbackResponse.json(String(repeating: " ", count: 50_000) + "{}").with { $0.closeMidBody = true },
                .json(#"{"id":2,"property":"whole"}"#),
            ]))
        let model: Model = try await makeService(server, clock: RecordingClock()).request(
            to: Endpoint(path: "/drop", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
        #expect(model.property == "whole")
        #expect(server.requests(path: "/drop").count == 2)
    }

    @Test("Nothing listening: cannotConnect is retried, then thrown")
    func refused() async throws {
        let server = try LoopbackServer()
        server.shutdown()
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }  // refusing until the end
        let dead = refusing.baseURL
        let clock = RecordingClock()
        await #expect {
            try await makeService(server, clock: clock, policy: RetryPolicy(maxRetries: 2))
                .requestVoid(to: Endpoint(path: "/", method: .get), via: DefaultAPIEnvironment(baseURL: dead))
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.cannotConnect)
        }
        #expect(clock.recordedDelays.count == 2)
    }
}
