import Foundation
import GentleNetworking
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("EventSourceState: reconnects, Last-Event-ID, retry: and backoff, without I/O")
struct EventSourceStateTests {
    let policy = EventSourcePolicy(
        defaultReconnectionTime: 3, maxReconnectionTime: 60,
        backoff: RetryPolicy(maxRetries: 2, baseDelay: 1, maxDelay: 30, jitter: .disabled))

    @Test("Open, events, a drop: reconnect after the reconnection time with the last ID")
    func dropAndResume() {
        var state = EventSourceState(policy: policy)
        #expect(state.start() == .connect(lastEventID: nil))
        #expect(state.opened(statusCode: 200, contentType: "text/event-stream; charset=utf-8", randomUnit: 0.5) == nil)
        let event = ServerSentEvent(data: "a", id: "7")
        #expect(state.received(event) == .deliver(event))
        #expect(state.ended(failure: nil, randomUnit: 0.5) == .reconnect(after: 3, lastEventID: "7"))
    }

    @Test("The server's retry: sets the wait (capped); without progress the waits back off, then it gives up")
    func retryAndBackoff() {
        var state = EventSourceState(policy: policy)
        _ = state.opened(statusCode: 200, contentType: "text/event-stream", randomUnit: 0)
        _ = state.received(ServerSentEvent(data: "x", id: "1", retry: 500))
        #expect(
            state.ended(failure: TransportError(.connectionLost, url: nil, message: ""), randomUnit: 0)
                == .reconnect(after: 0.5, lastEventID: "1"))
        // No event since: the reconnection time plus a backoff of 1 s, then 2 s, then give up.
        #expect(
            state.connectFailed(TransportError(.cannotConnect, url: nil, message: ""), randomUnit: 0)
                == .reconnect(after: 1.5, lastEventID: "1"))
        #expect(
            state.opened(statusCode: 503, contentType: nil, randomUnit: 0) == .reconnect(after: 2.5, lastEventID: "1"))
        #expect(state.opened(statusCode: 503, contentType: nil, randomUnit: 0) == .fail(.status(503)))
        // A huge retry: is capped.
        var capped = EventSourceState(policy: policy)
        capped.reconnectionTimeSet(milliseconds: Int.max)
        #expect(capped.serverReconnectionTime == 60)
        // A tiny one waits the floor, 0.5 s by default; a policy may lower it to 0.
        capped.reconnectionTimeSet(milliseconds: 0)
        #expect(capped.serverReconnectionTime == 0.5)
        capped.reconnectionTimeSet(milliseconds: -5)
        #expect(capped.serverReconnectionTime == 0.5)
        capped.reconnectionTimeSet(milliseconds: 750)
        #expect(capped.serverReconnectionTime == 0.75)
        var unfloored = EventSourceState(policy: EventSourcePolicy(minReconnectionTime: 0))
        unfloored.reconnectionTimeSet(milliseconds: 0)
        #expect(unfloored.serverReconnectionTime == 0)
        #expect(EventSourcePolicy(minReconnectionTime: .nan).minReconnectionTime == 0.5)
        // The floor never exceeds the client's own default.
        var quick = EventSourceState(policy: EventSourcePolicy(defaultReconnectionTime: 0.2))
        quick.reconnectionTimeSet(milliseconds: 100)
        #expect(quick.serverReconnectionTime == 0.2)
    }

    @Test("A NaN or negative policy time means its default, given to init or set later; it never makes a 0 s storm")
    func nanPolicies() {
        func waitAfterOneEvent(_ policy: EventSourcePolicy, retry: Int?) -> EventSourceState.Action {
            var state = EventSourceState(policy: policy)
            _ = state.opened(statusCode: 200, contentType: "text/event-stream", randomUnit: 0)
            if let retry { state.reconnectionTimeSet(milliseconds: retry) }
            _ = state.received(ServerSentEvent(data: "x"))
            return state.ended(failure: nil, randomUnit: 0)
        }
        for bad in [Double.nan, -1] {
            #expect(
                waitAfterOneEvent(EventSourcePolicy(maxReconnectionTime: bad), retry: 0)
                    == .reconnect(after: 0.5, lastEventID: nil))
            #expect(
                waitAfterOneEvent(EventSourcePolicy(defaultReconnectionTime: bad), retry: nil)
                    == .reconnect(after: 3, lastEventID: nil))
            var later = EventSourcePolicy()
            later.maxReconnectionTime = bad
            #expect(waitAfterOneEvent(later, retry: 86_400_000) == .reconnect(after: 60, lastEventID: nil))
            later = EventSourcePolicy()
            later.defaultReconnectionTime = bad
            #expect(waitAfterOneEvent(later, retry: nil) == .reconnect(after: 3, lastEventID: nil))
            later = EventSourcePolicy()
            later.minReconnectionTime = bad
            #expect(waitAfterOneEvent(later, retry: 0) == .reconnect(after: 0.5, lastEventID: nil))
        }
        // The backoff's own NaN settings (set after init) mean their defaults too: the second
        // reconnect without an event waits a backed-off delay, not 0 or NaN.
        var policy = EventSourcePolicy(defaultReconnectionTime: 0.1)
        policy.backoff.baseDelay = .nan
        policy.backoff.maxDelay = .nan
        policy.backoff.jitter = .disabled
        var state = EventSourceState(policy: policy)
        #expect(state.ended(failure: nil, randomUnit: 0) == .reconnect(after: 0.1, lastEventID: nil))
        #expect(state.ended(failure: nil, randomUnit: 0) == .reconnect(after: 0.6, lastEventID: nil))
    }

    @Test("With the default policy, reconnects are spread and back off on top of the reconnection time")
    func defaultPolicySpreads() {
        // Before: 3, 3, 3, 3 s whatever the random unit (max(3, jitter ≤ 2)): every client of a
        // restarted server came back at the same instants.
        func delays(randomUnit: Double, retry: Int? = nil) -> [TimeInterval] {
            var state = EventSourceState()
            _ = state.opened(statusCode: 200, contentType: "text/event-stream", randomUnit: randomUnit)
            if let retry { state.reconnectionTimeSet(milliseconds: retry) }
            _ = state.received(ServerSentEvent(data: "x"))
            var result: [TimeInterval] = []
            for _ in 0..<4 {
                guard case .reconnect(let after, _) = state.ended(failure: nil, randomUnit: randomUnit) else { break }
                result.append(after)
            }
            return result
        }
        // Full jitter (the default) with a 0.5 s base: +0.5·u, then +u·0.5, +u·1, +u·2.
        #expect(delays(randomUnit: 0) == [3, 3, 3, 3])
        #expect(delays(randomUnit: 1) == [3.5, 3.5, 4, 5])
        #expect(delays(randomUnit: 0.5) == [3.25, 3.25, 3.5, 4])
        #expect(delays(randomUnit: 1, retry: 5000) == [5.5, 5.5, 6, 7])
        // A thousand clients' first reconnects are not one instant.
        let firsts = Set((0..<1000).map { delays(randomUnit: Double($0) / 999)[0] })
        #expect(firsts.count > 900)
        #expect(firsts.allSatisfy { $0 >= 3 && $0 <= 3.5 })
    }

    @Test("An event resets the backoff")
    func progressResets() {
        var state = EventSourceState(policy: policy)
        _ = state.ended(failure: nil, randomUnit: 0)
        _ = state.ended(failure: nil, randomUnit: 0)
        #expect(state.reconnectsWithoutProgress == 2)
        _ = state.received(ServerSentEvent(data: "x"))
        #expect(state.reconnectsWithoutProgress == 0)
        #expect(state.ended(failure: nil, randomUnit: 0) == .reconnect(after: 3, lastEventID: nil))
    }

    @Test("204 finishes; a non-retryable status, the wrong type or a permanent failure fails; cancel fails")
    func endings() {
        var noContent = EventSourceState(policy: policy)
        #expect(noContent.opened(statusCode: 204, contentType: nil, randomUnit: 0) == .finish)
        #expect(noContent.ended(failure: nil, randomUnit: 0) == .finish, "nothing happens after the end")
        var notFound = EventSourceState(policy: policy)
        #expect(notFound.opened(statusCode: 404, contentType: nil, randomUnit: 0) == .fail(.status(404)))
        var json = EventSourceState(policy: policy)
        #expect(
            json.opened(statusCode: 200, contentType: "application/json", randomUnit: 0)
                == .fail(.unexpectedContentType("application/json")))
        var refused = EventSourceState(policy: policy)
        #expect(
            refused.connectFailed(TransportError(.tlsFailure, url: nil, message: "bad cert"), randomUnit: 0)
                == .fail(.connectFailed("TransportError.tlsFailure: bad cert")))
        var cancelled = EventSourceState(policy: policy)
        #expect(cancelled.ended(failure: CancellationError(), randomUnit: 0) == .fail(.cancelled))
        var cut = EventSourceState(policy: policy)
        #expect(
            cut.ended(failure: StreamingError.incompleteEvent, randomUnit: 0) == .reconnect(after: 3, lastEventID: nil))
    }

    @Test("An ID from a block without data still counts; a resumed state starts from its ID")
    func ids() {
        var state = EventSourceState(policy: policy, lastEventID: "41")
        #expect(state.start() == .connect(lastEventID: "41"))
        state.lastEventIDSet("42")
        state.lastEventIDSet(nil)
        #expect(state.lastEventID == "42")
    }

    @Test(
        "A 429 or 503 with Retry-After waits at least that long, capped at the maximum; a shorter one changes nothing")
    func retryAfter() {
        var state = EventSourceState(policy: policy)
        _ = state.start()
        #expect(
            state.opened(statusCode: 503, contentType: nil, randomUnit: 0, retryAfter: 20)
                == .reconnect(after: 20, lastEventID: nil))
        #expect(
            state.opened(statusCode: 429, contentType: nil, randomUnit: 0, retryAfter: 600)
                == .reconnect(after: 60, lastEventID: nil))
        var short = EventSourceState(policy: policy)
        _ = short.start()
        #expect(
            short.opened(statusCode: 503, contentType: nil, randomUnit: 0, retryAfter: 1)
                == .reconnect(after: 3, lastEventID: nil))
        var nan = EventSourceState(policy: policy)
        _ = nan.start()
        #expect(
            nan.opened(statusCode: 503, contentType: nil, randomUnit: 0, retryAfter: .nan)
                == .reconnect(after: 3, lastEventID: nil))
    }
}

/// Answers every request with a 204 (which ends an event source) and records the
/// `Last-Event-ID` each one carried.
private final class LastEventIDRecorder: HTTPTransportProtocol, Sendable {
    private let sent = Locked<[String?]>([])
    var lastEventIDs: [String?] { sent.current }

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        sent.withLock { $0.append(request.value(forHTTPHeaderField: "Last-Event-ID")) }
        guard let url = request.url,
            let response = HTTPURLResponse(url: url, statusCode: 204, httpVersion: nil, headerFields: nil)
        else { throw URLError(.badURL) }
        return (Data(), response)
    }
}

@Suite("HTTPNetworkService.eventSource: the endpoint's own Last-Event-ID")
struct EventSourceResumeTests {
    @Test(
        "Spelled in two cases, the endpoint's Last-Event-ID resumes from the one a request carries: the last sorted name"
    )
    func duplicateSpellings() async throws {
        let environment = DefaultAPIEnvironment(baseURL: URL(string: "http://127.0.0.1:9")!)
        // Eight pairs: a dictionary's order decides none of them right by chance more than once in 256 runs.
        let pairs = [
            ("Last-Event-ID", "last-event-id"), ("LAST-EVENT-ID", "Last-Event-Id"), ("last-event-ID", "Last-event-id"),
            ("LAST-event-id", "last-EVENT-id"), ("Last-Event-Id", "last-Event-Id"), ("LAST-EVENT-Id", "Last-EVENT-ID"),
            ("LaSt-EvEnT-Id", "lAsT-eVeNt-Id"), ("LAST-EVENT-ID", "last-event-id"),
        ]
        for (first, second) in pairs {
            let transport = LastEventIDRecorder()
            let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
            let endpoint = Endpoint(path: "/feed", method: .get, headers: [first: "from-first", second: "from-second"])
            for try await _ in service.eventSource(to: endpoint, via: environment) {}
            let expected = max(first, second) == first ? "from-first" : "from-second"
            #expect(transport.lastEventIDs == [expected], "\(first) / \(second)")
        }
    }
}
