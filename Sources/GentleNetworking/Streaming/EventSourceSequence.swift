import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Server-Sent Events that survive dropped connections: an `EventSource`-style client as an
/// `AsyncSequence`. It reconnects with `Last-Event-ID`, honours the server's `retry:`, backs off
/// with ``RetryPolicy``'s jitter, stops on a 204 or a status that is not retried, and ends when
/// the task is cancelled; see ``EventSourceState`` for the rules.
///
/// Made by ``HTTPNetworkService/eventSource(to:via:policy:lastEventID:clock:maxLineBytes:maxEventBytes:)``.
/// It ends (returns `nil`) on a 204, and throws ``EventSourceFailure`` when it gives up,
/// ``StreamingError`` for a line or event above its limit, and
/// `CancellationError` when cancelled.
public struct EventSourceSequence: AsyncSequence, Sendable {
    /// An event, dispatched.
    public typealias Element = ServerSentEvent

    let connect: @Sendable (String?) async throws -> (HTTPByteStream, HTTPURLResponse)
    let policy: EventSourcePolicy
    let lastEventID: String?
    let clock: RetryClock
    let maxLineBytes: Int
    let maxEventBytes: Int

    /// A sequence that connects with `connect` (given the `Last-Event-ID` to send, if any):
    /// for transports and services of your own.
    public init(
        policy: EventSourcePolicy = EventSourcePolicy(), lastEventID: String? = nil, clock: RetryClock = .live,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes,
        maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes,
        connect: @escaping @Sendable (_ lastEventID: String?) async throws -> (HTTPByteStream, HTTPURLResponse)
    ) {
        self.connect = connect
        self.policy = policy
        self.lastEventID = lastEventID
        self.clock = clock
        self.maxLineBytes = maxLineBytes
        self.maxEventBytes = maxEventBytes
    }

    /// The iterator.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: EventSourceSequence
        var state: EventSourceState
        var events: ServerSentEventSequence.AsyncIterator?
        var pending: EventSourceState.Action?
        /// The stream's own fault (a line or event above its limit), once
        /// thrown: thrown again by every later call, which never reconnects.
        var fault: StreamingError?

        /// The last event ID seen, which a later sequence can resume from.
        public var lastEventID: String? { state.lastEventID }

        /// The next event, reconnecting as needed; `nil` once the server said stop (204).
        public mutating func next() async throws -> ServerSentEvent? {
            if let fault { throw fault }
            var action: EventSourceState.Action
            if let pending {
                action = pending
            } else if events == nil {
                action = state.start()
            } else {
                action = try await read()
            }
            pending = nil
            while true {
                switch action {
                case .deliver(let event):
                    return event
                case .finish:
                    pending = .finish
                    return nil
                case .fail(let failure):
                    pending = .fail(failure)
                    if failure == .cancelled { throw CancellationError() }
                    throw failure
                case .connect(let id):
                    action = try await open(lastEventID: id)
                case .reconnect(let delay, let id):
                    do {
                        try await sequence.clock.sleep(delay)
                        action = try await open(lastEventID: id)
                    } catch is CancellationError {
                        action = state.cancelled()
                    }
                }
            }
        }

        /// The next action from the open stream: an event, or what its end calls for.
        private mutating func read() async throws -> EventSourceState.Action {
            guard var current = events else { return state.start() }
            let outcome: Result<ServerSentEvent?, any Error>
            do {
                outcome = .success(try await current.next())
            } catch {
                outcome = .failure(error)
            }
            state.lastEventIDSet(current.lastEventID)
            if let retry = current.reconnectionTime { state.reconnectionTimeSet(milliseconds: retry) }
            switch outcome {
            case .success(let event?):
                events = current
                return state.received(event)
            case .success(nil):
                events = nil
                return state.ended(failure: nil, randomUnit: sequence.clock.randomUnit())
            case .failure(let error):
                events = nil
                if Task.isCancelled || RetryPolicy.isCancellation(error) { return state.cancelled() }
                // A line or event above its limit is the stream's fault: no reconnect.
                if let streaming = error as? StreamingError, streaming != .incompleteEvent {
                    fault = streaming
                    throw streaming
                }
                return state.ended(failure: error, randomUnit: sequence.clock.randomUnit())
            }
        }

        /// The delay a `Retry-After` value asks for, by the sequence's clock.
        private func retryAfter(_ value: String?) -> TimeInterval? {
            value.flatMap { RetryAfter.delay(from: $0, now: sequence.clock.now()) }
        }

        /// Connects, then reads: the action that follows.
        private mutating func open(lastEventID: String?) async throws -> EventSourceState.Action {
            if Task.isCancelled { return state.cancelled() }
            do {
                let (body, response) = try await sequence.connect(lastEventID)
                if let action = state.opened(
                    statusCode: response.statusCode, contentType: response.value(forHTTPHeaderField: "Content-Type"),
                    randomUnit: sequence.clock.randomUnit(),
                    retryAfter: retryAfter(response.value(forHTTPHeaderField: "Retry-After")))
                {
                    body.cancel()
                    return action
                }
                // The ID in force carries on: an event before this body's first `id:` has it.
                events = body.serverSentEvents(
                    maxLineBytes: sequence.maxLineBytes, maxEventBytes: sequence.maxEventBytes,
                    lastEventID: lastEventID
                ).makeAsyncIterator()
            } catch {
                if Task.isCancelled || RetryPolicy.isCancellation(error) { return state.cancelled() }
                if let network = error as? NetworkError, let response = network.response,
                    case .httpStatusError = network.kind
                {
                    let retryAfterValue = response.headers.first { $0.key.lowercased() == "retry-after" }?.value
                    return state.opened(
                        statusCode: response.statusCode, contentType: response.headers["Content-Type"],
                        randomUnit: sequence.clock.randomUnit(), retryAfter: retryAfter(retryAfterValue))
                        ?? .fail(.status(response.statusCode))
                }
                return state.connectFailed(error, randomUnit: sequence.clock.randomUnit())
            }
            return try await read()
        }
    }

    /// Starts iterating: the first `next()` connects.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self, state: EventSourceState(policy: policy, lastEventID: lastEventID))
    }
}
