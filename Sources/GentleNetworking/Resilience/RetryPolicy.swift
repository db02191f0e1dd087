import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// When and how long to wait before retrying a request: a value that returns decisions and
/// never sleeps itself.
///
/// By default it retries:
/// - statuses 408, 429, 500, 502, 503 and 504;
/// - transient transport failures: timeouts, lost connections (including a body cut short),
///   refused connections, DNS failures, and no network at all (`notConnectedToInternet`);
/// - only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE), and POST or PATCH only when the
///   request carries an `Idempotency-Key` header.
///
/// It never retries other 4xx statuses or a cancellation. A `Retry-After` header (seconds or an
/// HTTP date) sets the delay; one longer than ``retryAfterCap`` means the response is returned
/// without retrying.
public struct RetryPolicy: Sendable {
    /// The most retries after the first attempt; 3 by default. 0 disables retrying.
    public var maxRetries: Int
    /// The first backoff delay in seconds; 0.5 by default.
    public var baseDelay: TimeInterval
    /// The longest backoff delay in seconds; 30 by default.
    public var maxDelay: TimeInterval
    /// How delays are randomized; ``JitterStrategy/full`` by default.
    public var jitter: JitterStrategy
    /// The longest `Retry-After` honoured, in seconds; 60 by default. A longer one surfaces the
    /// response instead of waiting.
    public var retryAfterCap: TimeInterval
    /// Decides whether a failed attempt may be retried at all; ``defaultShouldRetry(_:)`` by default.
    ///
    /// A cancellation is never retried, whatever this returns.
    public var shouldRetry: @Sendable (RetryContext) -> Bool

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maxRetries: 3 by default.
    ///   - baseDelay: 0.5 s by default.
    ///   - maxDelay: 30 s by default.
    ///   - jitter: ``JitterStrategy/full`` by default; `nil` means ``JitterStrategy/disabled``
    ///     (exact exponential delays), as the seed library writes it.
    ///   - retryAfterCap: 60 s by default.
    ///   - shouldRetry: ``defaultShouldRetry(_:)`` by default.
    public init(
        maxRetries: Int = 3,
        baseDelay: TimeInterval = 0.5,
        maxDelay: TimeInterval = 30.0,
        jitter: JitterStrategy? = .full,
        retryAfterCap: TimeInterval = 60,
        shouldRetry: @escaping @Sendable (RetryContext) -> Bool = RetryPolicy.defaultShouldRetry
    ) {
        self.maxRetries = max(0, maxRetries)
        self.baseDelay = Self.setting(baseDelay, default: 0.5)
        self.maxDelay = Self.setting(maxDelay, default: 30)
        self.jitter = jitter ?? .disabled
        self.retryAfterCap = Self.setting(retryAfterCap, default: 60)
        self.shouldRetry = shouldRetry
    }

    /// The statuses retried by default.
    public static let retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The transport failures retried by default.
    public static let retryableTransportCodes: Set<TransportError.Code> = [
        .timedOut, .connectionLost, .truncatedBody, .cannotConnect, .cannotResolveHost, .notConnectedToInternet,
    ]

    /// The default rule: an idempotent request (or one with an `Idempotency-Key`) that failed
    /// with a retryable status or a transient transport error.
    public static func defaultShouldRetry(_ context: RetryContext) -> Bool {
        guard isIdempotent(context.request) else { return false }
        switch context.outcome {
        case .response(let response):
            return retryableStatusCodes.contains(response.statusCode)
        case .failure(let error):
            return isTransient(error)
        }
    }

    /// Whether `request` may be repeated safely: GET, HEAD, OPTIONS, PUT, DELETE, TRACE, or any
    /// method when it carries an `Idempotency-Key` header.
    public static func isIdempotent(_ request: URLRequest) -> Bool {
        if let key = request.value(forHTTPHeaderField: "Idempotency-Key"), !key.isEmpty { return true }
        let method = (request.httpMethod ?? "GET").uppercased()
        return ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"].contains(method)
    }

    /// Whether `error` is a transient transport failure worth retrying.
    public static func isTransient(_ error: any Error) -> Bool {
        if let transport = error as? TransportError { return retryableTransportCodes.contains(transport.code) }
        if let network = error as? NetworkError, case .transport(let code) = network.kind {
            return retryableTransportCodes.contains(code)
        }
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
                .notConnectedToInternet:
                return true
            default:
                return false
            }
        }
        return false
    }

    /// Whether `error` means the caller cancelled.
    public static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let urlError = error as? URLError, urlError.code == .cancelled { return true }
        return false
    }

    /// Decides what to do after a failed attempt.
    ///
    /// - Parameters:
    ///   - context: The request, how many retries came before, and what happened.
    ///   - previousDelay: The delay before the previous retry; `nil` before the first.
    ///   - randomUnit: A number in `[0, 1)` for the jitter.
    ///   - now: The current time, for `Retry-After` dates.
    public func decide(
        _ context: RetryContext, previousDelay: TimeInterval?, randomUnit: Double, now: Date
    ) -> RetryDecision {
        if case .failure(let error) = context.outcome, Self.isCancellation(error) {
            return .giveUp(.cancelled)
        }
        guard context.attempt < maxRetries else { return .giveUp(.exhausted) }
        guard context.request.httpBodyStream == nil else { return .giveUp(.bodyNotReplayable) }
        guard shouldRetry(context) else { return .giveUp(.notRetryable) }
        if case .response(let response) = context.outcome,
            let header = response.value(forHTTPHeaderField: "Retry-After"),
            let wait = RetryAfter.delay(from: header, now: now)
        {
            let cap = Self.setting(retryAfterCap, default: 60)
            return wait > cap ? .giveUp(.retryAfterTooLong(wait)) : .retry(after: wait)
        }
        let delay = jitter.delay(
            attempt: context.attempt, baseDelay: Self.setting(baseDelay, default: 0.5),
            maxDelay: Self.setting(maxDelay, default: 30), previousDelay: previousDelay, randomUnit: randomUnit)
        return .retry(after: delay)
    }

    /// A duration setting as used: NaN or a negative value (set through the public property,
    /// where `init` cannot clamp it) means "not set", the default; infinity and huge values are
    /// capped (``Clamp/maxSeconds``). `max(0, .nan)` is 0: a NaN cap gave up on every
    /// `Retry-After`, a NaN `maxDelay` retried back to back.
    static func setting(_ value: TimeInterval, default fallback: TimeInterval) -> TimeInterval {
        value.isNaN || value < 0 ? fallback : min(value, Clamp.maxSeconds)
    }
}

/// What a ``RetryPolicy`` sees about a failed attempt.
public struct RetryContext: Sendable {
    /// What an attempt ended with.
    public enum Outcome: Sendable {
        /// An HTTP response (any status).
        case response(HTTPURLResponse)
        /// A thrown error.
        case failure(any Error)
    }

    /// The request as sent.
    public let request: URLRequest
    /// How many retries came before this failure: 0 after the first attempt.
    public let attempt: Int
    /// What the attempt ended with.
    public let outcome: Outcome

    /// Creates a context.
    public init(request: URLRequest, attempt: Int, outcome: Outcome) {
        self.request = request
        self.attempt = attempt
        self.outcome = outcome
    }
}

/// What a ``RetryPolicy`` decided.
public enum RetryDecision: Sendable, Hashable {
    /// Why a request is not retried.
    public enum Reason: Sendable, Hashable {
        /// ``RetryPolicy/maxRetries`` retries were made already.
        case exhausted
        /// The status or error is not retryable, or the method is not idempotent.
        case notRetryable
        /// The server asked for a wait longer than ``RetryPolicy/retryAfterCap``.
        case retryAfterTooLong(TimeInterval)
        /// The caller cancelled.
        case cancelled
        /// The body is a stream that cannot be sent twice.
        case bodyNotReplayable
    }

    /// Wait this many seconds, then send again.
    case retry(after: TimeInterval)
    /// Return the response, or throw the error, as it is.
    case giveUp(Reason)
}
