import Foundation

/// Something that happened to a logical request between its first byte sent and its answer: a
/// redirect hop, a retry, a credential refresh, an ETag revalidation.
///
/// Steps appear in ``RequestMetrics/steps`` and, as they happen, as ``NetworkLogRecord``s of
/// events ``NetworkLogRecord/Event/redirect``, ``NetworkLogRecord/Event/retry``,
/// ``NetworkLogRecord/Event/refresh`` and ``NetworkLogRecord/Event/cache``. Nothing in a step
/// carries a credential: URLs are redacted and reasons are status codes or error codes, never
/// error messages or bodies.
public enum ExchangeStep: Sendable, Equatable, CustomStringConvertible {
    /// A redirect was followed. `credentialsStripped` is `true` when the hop went to another
    /// origin and credential headers were dropped from it.
    case redirected(statusCode: Int, to: String, credentialsStripped: Bool)
    /// ``RetryTransport`` decided to retry: attempt `attempt` (1 for the first) ended with
    /// `reason` (such as `HTTP 503` or `timedOut`), and the next attempt follows after `delay`
    /// seconds.
    case retrying(attempt: Int, delay: TimeInterval, reason: String)
    /// ``ReauthTransport`` started refreshing the credential after a 401.
    case refreshStarted
    /// A 401 joined a refresh that another request had already started.
    case refreshJoined
    /// The refresh this request waited for succeeded.
    case refreshFinished
    /// The refresh this request waited for failed (or timed out); `reason` names the
    /// ``ReauthError`` code.
    case refreshFailed(reason: String)
    /// The request is sent again with the current credential (after a refresh, or because the
    /// credential had already been replaced).
    case reauthorized
    /// ``ETagTransport`` sent the request with `If-None-Match`, revalidating its cached entry.
    case revalidating
    /// The server answered 304 and ``ETagTransport`` served the cached body.
    case servedFromCache

    /// Such as `redirected 302 to http://host/next (credentials stripped)`.
    public var description: String {
        switch self {
        case .redirected(let status, let target, let stripped):
            return "redirected \(status) to \(target)\(stripped ? " (credentials stripped)" : "")"
        case .retrying(let attempt, let delay, let reason):
            return "retrying after attempt \(attempt) (\(reason)) in \(TransactionMetrics.milliseconds(delay))"
        case .refreshStarted: return "refresh started"
        case .refreshJoined: return "refresh joined"
        case .refreshFinished: return "refresh finished"
        case .refreshFailed(let reason): return "refresh failed (\(reason))"
        case .reauthorized: return "re-sent with the current credential"
        case .revalidating: return "revalidating the cached entry (If-None-Match)"
        case .servedFromCache: return "304: served from the cache"
        }
    }

    /// The log record event this step is reported as.
    public var event: NetworkLogRecord.Event {
        switch self {
        case .redirected: return .redirect
        case .retrying: return .retry
        case .refreshStarted, .refreshJoined, .refreshFinished, .refreshFailed, .reauthorized: return .refresh
        case .revalidating, .servedFromCache: return .cache
        }
    }

    /// Whether the request goes out again after this step (a new attempt).
    var startsAttempt: Bool {
        switch self {
        case .retrying, .reauthorized: return true
        default: return false
        }
    }

    /// A reason for a retry that names no secret: the status, or the error's code.
    static func reason(for outcome: RetryContext.Outcome) -> String {
        switch outcome {
        case .response(let response):
            return "HTTP \(response.statusCode)"
        case .failure(let error):
            if let error = error as? TransportError { return "\(error.code)" }
            if let error = error as? NetworkError { return "\(error.kind)" }
            if let error = error as? URLError { return "URLError \(error.code.rawValue)" }
            return String(describing: type(of: error))
        }
    }
}

/// Everything measured about one logical request: each exchange on the wire (every redirect hop
/// of every attempt) and each step the decorators took, in order.
///
/// Get it per call with ``HTTPNetworkService/requestWithMetrics(to:via:)``, or from the
/// ``NetworkLogRecord/metrics`` of a response or failure record.
public struct RequestMetrics: Sendable, Equatable {
    /// When the service started the request.
    public var start: Date
    /// From the start to the answer (or the failure), in seconds.
    public var duration: TimeInterval
    /// The exchanges on the wire, in order. Empty when nothing reached a transport that reports
    /// metrics (a canned or custom transport, or a request refused before sending).
    public var transactions: [TransactionMetrics]
    /// What the decorators and transports did, in order.
    public var steps: [ExchangeStep]

    /// Creates metrics.
    public init(start: Date, duration: TimeInterval, transactions: [TransactionMetrics], steps: [ExchangeStep]) {
        self.start = start
        self.duration = duration
        self.transactions = transactions
        self.steps = steps
    }

    /// How many attempts were made: 1, plus one for each retry and each re-send with a
    /// refreshed credential.
    public var attempts: Int {
        1 + steps.filter(\.startsAttempt).count
    }

    /// How many redirects were followed, over all attempts.
    public var redirectCount: Int {
        steps.filter {
            if case .redirected = $0 { return true }
            return false
        }.count
    }

    /// Whether the body came from the ETag cache after a 304.
    public var servedFromCache: Bool {
        steps.contains(.servedFromCache)
    }

    /// The last exchange: the one whose response the caller got.
    public var finalTransaction: TransactionMetrics? { transactions.last }
}
