import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The seed library's decision shape: `shouldRetry(statusCode, error)`.
extension RetryPolicy {
    /// Creates a policy whose decision takes a status code and an error, as the seed library's
    /// does.
    ///
    /// `shouldRetry` is called with a response's status and its ``NetworkError`` (an
    /// `.httpStatusError` carrying the status and the response), or with `0` and the error an
    /// attempt threw. Unlike the seed, the safety rules still come first: only idempotent
    /// requests (``isIdempotent(_:)``: not POST or PATCH without an `Idempotency-Key`) are
    /// retried, never a cancellation, and `Retry-After` is honoured up to 60 s.
    ///
    /// - Parameters:
    ///   - maxRetries: 3 by default.
    ///   - baseDelay: 0.5 s by default.
    ///   - maxDelay: 30 s by default.
    ///   - jitter: ``JitterStrategy/full`` by default; `nil` for exact exponential delays.
    ///   - shouldRetry: The decision, for example ``defaultShouldRetry(statusCode:error:)``.
    public init(
        maxRetries: Int = 3,
        baseDelay: TimeInterval = 0.5,
        maxDelay: TimeInterval = 30.0,
        jitter: JitterStrategy? = .full,
        shouldRetry: @escaping @Sendable (Int, any Error) -> Bool
    ) {
        self.init(maxRetries: maxRetries, baseDelay: baseDelay, maxDelay: maxDelay, jitter: jitter) { context in
            guard Self.isIdempotent(context.request) else { return false }
            switch context.outcome {
            case .response(let response):
                guard let status = HTTPStatusError(statusCode: response.statusCode) else { return false }
                let error = NetworkError(
                    .httpStatusError(status), message: "HTTP \(response.statusCode)", url: response.url,
                    response: HTTPErrorResponse(response, body: Data()))
                return shouldRetry(response.statusCode, error)
            case .failure(let error):
                return shouldRetry(0, error)
            }
        }
    }

    /// The default decision in the seed library's shape: a retryable status
    /// (``retryableStatusCodes``) when `statusCode` is not 0, else a transient transport failure
    /// (``isTransient(_:)``). Stricter than the seed, which retried every error that was not a
    /// `NetworkError`.
    public static func defaultShouldRetry(statusCode: Int, error: any Error) -> Bool {
        statusCode != 0 ? retryableStatusCodes.contains(statusCode) : isTransient(error)
    }
}
