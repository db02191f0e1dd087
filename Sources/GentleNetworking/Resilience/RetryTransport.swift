import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries failed requests with exponential backoff and jitter, as a ``RetryPolicy`` decides.
///
/// ```swift
/// let service = HTTPNetworkService(
///     transport: RetryTransport(
///         inner: URLSessionTransport(session: .shared),
///         policy: RetryPolicy(maxRetries: 3, baseDelay: 0.5, maxDelay: 30.0, jitter: .full)
///     )
/// )
/// ```
///
/// - When retries run out on a status, the last response is returned, so the service raises the
///   typed status error. When they run out on a transport error, the last error is thrown.
/// - Cancelling the task interrupts a backoff sleep at once and throws `CancellationError`.
/// - `onRetry`, when given, is told about every retry before its delay starts.
/// - Retries draw on a ``RetryBudget`` shared by all requests of this transport (500 tokens, 5
///   a retry, by default): in a storm of failures the server receives at most about 100 retries
///   until successes refill it, however many requests are in flight. When the budget cannot pay
///   for a retry, the response or error is returned as it is.
public struct RetryTransport: HTTPTransportProtocol {
    /// The transport each attempt is sent through.
    public var inner: any HTTPTransportProtocol { innerExchange.transport }
    /// The inner transport, with what it can do looked up once (it holds `inner`).
    let innerExchange: InnerTransport
    /// The policy that decides.
    public let policy: RetryPolicy
    /// Time and randomness; ``RetryClock/live`` by default.
    public let clock: RetryClock
    /// Called before each retry's delay, such as for logging.
    public let onRetry: (@Sendable (RetryEvent) -> Void)?
    /// The allowance of retries shared by this transport's requests.
    public let budget: RetryBudget

    /// Creates a retrying transport.
    ///
    /// - Parameters:
    ///   - inner: The platform's default transport by default.
    ///   - policy: `RetryPolicy()` by default: 3 retries, 0.5 s base, 30 s cap, full jitter.
    ///   - clock: ``RetryClock/live`` by default.
    ///   - onRetry: `nil` by default.
    ///   - budget: A new `RetryBudget()` by default (its own, for this transport); pass one
    ///     budget to several transports to share it, or ``RetryBudget/unlimited()`` to let only
    ///     the policy limit retries.
    public init(
        inner: any HTTPTransportProtocol = DefaultTransport.make(),
        policy: RetryPolicy = RetryPolicy(),
        clock: RetryClock = .live,
        onRetry: (@Sendable (RetryEvent) -> Void)? = nil,
        budget: RetryBudget = RetryBudget()
    ) {
        self.innerExchange = InnerTransport(inner)
        self.policy = policy
        self.clock = clock
        self.onRetry = onRetry
        self.budget = budget
    }

    /// Sends `request`, retrying as the policy decides.
    ///
    /// - Throws: `CancellationError` when cancelled (including during a backoff), or the last
    ///   error of the inner transport when retries are exhausted or not allowed.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await retrying(request, exchange: { try await inner.data(for: $0) }, discard: { _ in })
    }

    /// `data(for:)` with the inner transport's response built only when the policy must read
    /// it (a status other than 2xx or 3xx).
    func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse) {
        try await retrying(
            request, exchange: { try await innerExchange.deferredExchange($0) }, discard: { _ in })
    }

    /// Establishes a stream of `request`, retrying as the policy decides, as ``data(for:)``
    /// does, until a response head that is not retried arrives. A stream that has started
    /// delivering its body is never replayed: a failure mid-body is the caller's.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        try await retrying(
            request, exchange: { try await inner.stream(for: $0) }, discard: { $0.cancel() })
    }

    /// Set while an event source connects (``HTTPNetworkService/eventSource(to:via:policy:lastEventID:clock:maxLineBytes:maxEventBytes:)``):
    /// its own reconnection policy (the server's `retry:`, backoff, the loop guard) decides when
    /// to try again, so a `RetryTransport` in the stack sends each attempt once. Without it a
    /// service whose transport retries (the default) made up to 4 connections per attempt, on
    /// a schedule that ignored the server's `retry:` and brought every client of a restarted
    /// server back within seconds.
    @TaskLocal package static var isBypassed = false

    /// The retry loop of every entry point: `discard` gives up a retried attempt's body. A 2xx
    /// or 3xx is returned as it came (a deferred response stays unbuilt); any other status is
    /// built for the policy to read.
    private func retrying<Body, Response: ExchangeResponse>(
        _ request: URLRequest, exchange: (URLRequest) async throws -> (Body, Response),
        discard: (Body) -> Void
    ) async throws -> (Body, Response) {
        if Self.isBypassed { return try await exchange(request) }
        var attempt = 0
        var previousDelay: TimeInterval?
        var lastRetryCost = 0
        while true {
            try Task.checkCancellation()
            let outcome: RetryContext.Outcome
            let result: (Body, Response)?
            do {
                let (body, response) = try await exchange(request)
                if (200..<400).contains(response.statusCode) {
                    budget.recordSuccess(afterRetryCosting: lastRetryCost)
                    return (body, response)
                }
                outcome = .response(try response.httpResponse())
                result = (body, response)
            } catch {
                result = nil
                outcome = .failure(error)
            }
            let context = RetryContext(request: request, attempt: attempt, outcome: outcome)
            let decision = policy.decide(
                context, previousDelay: previousDelay, randomUnit: clock.randomUnit(), now: clock.now())
            switch decision {
            case .retry(let delay):
                // When the budget is spent, what this attempt got is the answer.
                guard let cost = budget.withdraw(forRetryAfter: outcome) else {
                    return try Self.answer(result, outcome)
                }
                if let result { discard(result.0) }
                lastRetryCost = cost
                onRetry?(RetryEvent(request: request, retryNumber: attempt + 1, delay: delay, outcome: outcome))
                ExchangeRecorder.note(
                    .retrying(attempt: attempt + 1, delay: delay, reason: ExchangeStep.reason(for: outcome)))
                do {
                    try await clock.sleep(delay)
                } catch {
                    // Cancelled during the wait: the retry is never sent, so it costs nothing (a
                    // screen cancelling its requests during 503 backoffs drained the shared budget).
                    budget.refund(cost)
                    throw error
                }
                previousDelay = delay
                attempt += 1
                // The next attempt's 401 is judged by its own redirects, not this one's.
                RequestWitness.current(for: request.url)?.noteNewAttempt()
            case .giveUp:
                return try Self.answer(result, outcome)
            }
        }
    }

    /// The last attempt's response, or its error thrown.
    private static func answer<Body, Response>(
        _ result: (Body, Response)?, _ outcome: RetryContext.Outcome
    ) throws -> (Body, Response) {
        switch outcome {
        case .failure(let error): throw error
        case .response(let response):
            // A `.response` outcome always comes with its result (see `retrying`).
            guard let result else {
                throw TransportError(
                    .badResponse, url: response.url,
                    message: "The retried response was lost (status \(response.statusCode)).")
            }
            return result
        }
    }
}

extension RetryTransport: DeferredResponseTransport {}

/// A retry about to happen, as reported to ``RetryTransport/onRetry``.
public struct RetryEvent: Sendable, CustomStringConvertible {
    /// The request being retried.
    public let request: URLRequest
    /// Which retry this is: 1 for the first.
    public let retryNumber: Int
    /// The delay before it, in seconds.
    public let delay: TimeInterval
    /// What the previous attempt ended with.
    public let outcome: RetryContext.Outcome

    /// Such as `retry 1 of GET /flaky after 0.250 s (status 503)`.
    public var description: String {
        let cause: String
        switch outcome {
        case .response(let response): cause = "status \(response.statusCode)"
        case .failure(let error): cause = Redactor.describing(error)
        }
        let target = request.url?.path ?? "?"
        let seconds = String(format: "%.3f", delay)
        return "retry \(retryNumber) of \(request.httpMethod ?? "GET") \(target) after \(seconds) s (\(cause))"
    }
}
