import Foundation

/// The lifecycle of a reconnecting Server-Sent Events client, as a plain value: what happened
/// goes in, what to do comes out. ``EventSourceSequence`` performs the actions; tests drive the
/// value without I/O and assert exact delays.
///
/// The rules (WHATWG HTML's `EventSource`, with an API client's limits):
/// - A 200 `text/event-stream` response opens the stream; a 204 finishes it (the server's way
///   to say "stop"). A retryable status (``RetryPolicy/retryableStatusCodes``) or a transient
///   failure reconnects; any other status (another 2xx included), content type or failure
///   fails it.
/// - Every reconnect sends the last event ID seen (`Last-Event-ID`).
/// - The first reconnect after progress (an event delivered) waits the reconnection time: the
///   server's `retry:` when it sent one (at least ``EventSourcePolicy/minReconnectionTime``, at
///   most ``EventSourcePolicy/maxReconnectionTime``),
///   else ``EventSourcePolicy/defaultReconnectionTime``, plus a random part of the backoff's
///   base delay (none when its jitter is ``JitterStrategy/disabled``), so the clients of a
///   restarted server do not all come back at once. Each further reconnect without an event in
///   between waits the reconnection time plus the backoff (the policy's base, cap and jitter);
///   after ``RetryPolicy/maxRetries`` of them, the stream fails.
public struct EventSourceState: Sendable {
    /// What the client must do next.
    public enum Action: Sendable, Equatable {
        /// Connect, sending `lastEventID` as `Last-Event-ID` when there is one.
        case connect(lastEventID: String?)
        /// Hand the event to the consumer.
        case deliver(ServerSentEvent)
        /// Wait `seconds`, then connect with `lastEventID`.
        case reconnect(after: TimeInterval, lastEventID: String?)
        /// The stream is over, by the server's choice (204): end the sequence.
        case finish
        /// The stream failed for good: end the sequence with the failure.
        case fail(EventSourceFailure)
    }

    /// The reconnect rules.
    public let policy: EventSourcePolicy
    /// The last event ID seen, sent when reconnecting.
    public private(set) var lastEventID: String?
    /// The server's reconnection time in seconds, once it sent `retry:` (within the policy's
    /// floor and cap).
    public private(set) var serverReconnectionTime: TimeInterval?
    /// Reconnects since the last delivered event.
    public private(set) var reconnectsWithoutProgress = 0
    private var previousDelay: TimeInterval?
    private var ended = false

    /// Creates the state of a client that has not connected yet; `lastEventID` resumes a stream
    /// seen before.
    public init(policy: EventSourcePolicy = EventSourcePolicy(), lastEventID: String? = nil) {
        self.policy = policy
        self.lastEventID = lastEventID
    }

    /// The first action: connect.
    public func start() -> Action {
        .connect(lastEventID: lastEventID)
    }

    /// A response head arrived. `nil` means the stream is open: read its events.
    ///
    /// `retryAfter` is the delay the response's `Retry-After` asks for, in seconds, if any: a
    /// reconnect after a retryable status (429, 503) waits at least that long, capped at the
    /// policy's maximum reconnection time (a server that asked for two minutes was tried again
    /// after 3 s).
    public mutating func opened(
        statusCode: Int, contentType: String?, randomUnit: Double, retryAfter: TimeInterval? = nil
    ) -> Action? {
        guard !ended else { return .finish }
        if statusCode == 204 { return end(.finish) }
        // Only a 200 opens the stream (WHATWG HTML: any other status fails the connection; a
        // 201 or 206 is not an event stream). The type is what precedes the first `;`, so
        // `;text/event-stream` (an empty type) is refused.
        if statusCode == 200 {
            let type = contentType?.split(separator: ";", omittingEmptySubsequences: false).first?
                .trimmingCharacters(in: .whitespaces).lowercased()
            guard type == "text/event-stream" else {
                return end(.fail(.unexpectedContentType(PrintableText.escaping(contentType ?? ""))))
            }
            return nil
        }
        guard RetryPolicy.retryableStatusCodes.contains(statusCode) else {
            return end(.fail(.status(statusCode)))
        }
        let action = reconnect(randomUnit: randomUnit, cause: .status(statusCode))
        guard case .reconnect(let delay, let id) = action, let retryAfter, !retryAfter.isNaN, retryAfter > delay else {
            return action
        }
        return .reconnect(after: max(delay, min(retryAfter, policy.maximum)), lastEventID: id)
    }

    /// An event arrived: remember its ID and reconnection time, and deliver it.
    public mutating func received(_ event: ServerSentEvent) -> Action {
        if let id = event.id { lastEventID = id }
        if let retry = event.retry { reconnectionTimeSet(milliseconds: retry) }
        reconnectsWithoutProgress = 0
        previousDelay = nil
        return .deliver(event)
    }

    /// The stream set `retry:` (in a block that dispatched no event, or in one that did).
    public mutating func reconnectionTimeSet(milliseconds: Int) {
        let seconds = Double(max(0, milliseconds)) / 1000
        // The floor never exceeds the client's own default: a server's value then cannot make
        // it wait longer than saying nothing would.
        let floor = min(policy.minimum, policy.fallback)
        serverReconnectionTime = min(max(seconds, floor), policy.maximum)
    }

    /// The stream set an ID in a block that dispatched no event.
    public mutating func lastEventIDSet(_ id: String?) {
        if let id { lastEventID = id }
    }

    /// The body ended: the server closed it (`failure` `nil`), or it broke.
    public mutating func ended(failure: (any Error)?, randomUnit: Double) -> Action {
        guard !ended else { return .finish }
        if let failure {
            if RetryPolicy.isCancellation(failure) { return end(.fail(.cancelled)) }
            guard Self.isTransient(failure) else { return end(.fail(.streamFailed(Redactor.describing(failure)))) }
        }
        return reconnect(randomUnit: randomUnit, cause: .dropped)
    }

    /// Connecting failed before a response head (`failure`).
    public mutating func connectFailed(_ failure: any Error, randomUnit: Double) -> Action {
        guard !ended else { return .finish }
        if RetryPolicy.isCancellation(failure) { return end(.fail(.cancelled)) }
        guard Self.isTransient(failure) else { return end(.fail(.connectFailed(Redactor.describing(failure)))) }
        return reconnect(randomUnit: randomUnit, cause: .dropped)
    }

    /// The consumer stopped (task cancelled, or it left the loop).
    public mutating func cancelled() -> Action {
        end(.fail(.cancelled))
    }

    private enum Cause {
        case status(Int)
        case dropped
    }

    private mutating func reconnect(randomUnit: Double, cause: Cause) -> Action {
        let backoff = policy.backoff
        guard reconnectsWithoutProgress <= backoff.maxRetries else {
            switch cause {
            case .status(let code): return end(.fail(.status(code)))
            case .dropped: return end(.fail(.reconnectsExhausted(reconnectsWithoutProgress)))
            }
        }
        let base = serverReconnectionTime ?? policy.fallback
        let backoffBase = RetryPolicy.setting(backoff.baseDelay, default: 0.5)
        // On top of the reconnection time, never instead of it: as `max(base, backoff)` the
        // backoff was below a 3 s reconnection time for its first retries, so every client of
        // a restarted server reconnected at exactly +3, +6, +9 s, together.
        let added: TimeInterval
        if reconnectsWithoutProgress == 0 {
            // The first reconnect is spread over the backoff's base delay (none without jitter).
            if case .disabled = backoff.jitter {
                added = 0
            } else {
                added = (randomUnit.isNaN ? 0 : min(max(randomUnit, 0), 1)) * backoffBase
            }
        } else {
            added = backoff.jitter.delay(
                attempt: reconnectsWithoutProgress - 1, baseDelay: backoffBase,
                maxDelay: RetryPolicy.setting(backoff.maxDelay, default: 30), previousDelay: previousDelay,
                randomUnit: randomUnit)
            previousDelay = added
        }
        reconnectsWithoutProgress += 1
        return .reconnect(after: base + added, lastEventID: lastEventID)
    }

    private mutating func end(_ action: Action) -> Action {
        ended = true
        return action
    }

    /// A dropped connection, a timeout, a body cut mid-event: worth reconnecting.
    static func isTransient(_ error: any Error) -> Bool {
        if RetryPolicy.isTransient(error) { return true }
        return error as? StreamingError == .incompleteEvent
    }
}

/// How an ``EventSourceSequence`` reconnects.
public struct EventSourcePolicy: Sendable {
    /// The wait before reconnecting when the server sent no `retry:`; 3 s by default.
    public var defaultReconnectionTime: TimeInterval
    /// The longest `retry:` honoured; 60 s by default (a larger value waits 60 s).
    public var maxReconnectionTime: TimeInterval
    /// The shortest `retry:` honoured; 0.5 s by default (a smaller value, `retry: 0` included,
    /// waits 0.5 s), or ``defaultReconnectionTime`` when that is shorter. A server that sends
    /// `retry: 0` and closes after each event would otherwise be reconnected to as fast as the
    /// machine can: every connection brings an event, so the backoff for reconnects without
    /// progress never starts. Set 0 to honour any value. ``maxReconnectionTime`` wins over it.
    public var minReconnectionTime: TimeInterval
    /// The backoff for reconnects without an event in between: its `maxRetries` (3 by default)
    /// is how many are tried, its base, cap and jitter how long they wait.
    public var backoff: RetryPolicy

    /// Creates a policy. A negative or NaN time means its default, here and when set through a
    /// property later (`max(0, .nan)` is 0, and a 0 s wait reconnects back to back); infinity
    /// and huge values are capped at about 31 years. `minReconnectionTime` is 0.5 s by default
    /// (see ``minReconnectionTime``).
    public init(
        defaultReconnectionTime: TimeInterval = 3, maxReconnectionTime: TimeInterval = 60,
        backoff: RetryPolicy = RetryPolicy(), minReconnectionTime: TimeInterval = 0.5
    ) {
        self.defaultReconnectionTime = RetryPolicy.setting(defaultReconnectionTime, default: 3)
        self.maxReconnectionTime = RetryPolicy.setting(maxReconnectionTime, default: 60)
        self.minReconnectionTime = RetryPolicy.setting(minReconnectionTime, default: 0.5)
        self.backoff = backoff
    }

    /// ``defaultReconnectionTime`` as used: NaN or negative (set through the property) is 3 s.
    var fallback: TimeInterval { RetryPolicy.setting(defaultReconnectionTime, default: 3) }
    /// ``maxReconnectionTime`` as used: NaN or negative is 60 s.
    var maximum: TimeInterval { RetryPolicy.setting(maxReconnectionTime, default: 60) }
    /// ``minReconnectionTime`` as used: NaN or negative is 0.5 s.
    var minimum: TimeInterval { RetryPolicy.setting(minReconnectionTime, default: 0.5) }
}

/// Why an ``EventSourceSequence`` ended with an error.
public enum EventSourceFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered a status that is not retried.
    case status(Int)
    /// A 200 response that is not `text/event-stream`, with its `Content-Type` (control
    /// characters written as escapes, `\r`, `\n`, `\u001B`, as in error messages).
    case unexpectedContentType(String)
    /// This many reconnects in a row brought no event.
    case reconnectsExhausted(Int)
    /// Connecting failed for a reason that is not transient.
    case connectFailed(String)
    /// The stream broke for a reason that is not transient (its description).
    case streamFailed(String)
    /// The consumer's task was cancelled.
    case cancelled

    /// One sentence.
    public var description: String {
        switch self {
        case .status(let code): "The event stream was refused with HTTP \(code)."
        case .unexpectedContentType(let type): "The response is not an event stream (Content-Type \"\(type)\")."
        case .reconnectsExhausted(let count): "\(count) reconnects in a row brought no event."
        case .connectFailed(let reason): "Connecting to the event stream failed: \(reason)"
        case .streamFailed(let reason): "The event stream failed: \(reason)"
        case .cancelled: "The event stream was cancelled."
        }
    }
}

extension EventSourceFailure: LocalizedError {
    /// The same text as ``EventSourceFailure/description``: what `localizedDescription` shows (an alert, a log line),
    /// free of credentials, instead of Foundation's generic "The operation could not be completed".
    public var errorDescription: String? { description }
}
