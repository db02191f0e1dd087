import Foundation

/// A non-2xx answer, as ``NetworkError/httpStatusError(_:)`` carries it: the
/// ``HTTPStatusError`` category plus the response (status, headers, body) and the message.
///
/// It compares and matches by status only, like the seed's `HTTPStatusError`, so seed code
/// keeps working:
/// ```swift
/// catch NetworkError.httpStatusError(.unauthorized) { … }
/// if case .httpStatusError(let status) = error, status == .notFound { … }
/// switch status {
/// case .rateLimited: retryLater(status.response?.header("Retry-After"))
/// case .clientError(422): showValidation(status.response?.body)
/// default: …
/// }
/// ```
/// A `switch` that binds a category's code (`case .clientError(let code)`) or must be
/// exhaustive switches over ``error``, the plain ``HTTPStatusError``.
public struct HTTPStatusFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status category, such as ``HTTPStatusError/notFound``.
    public let error: HTTPStatusError
    /// The message, URL, response and underlying error of the failure.
    public let details: NetworkError.Details

    /// Creates a failure for `error`; `details` defaults to a message naming the status.
    public init(_ error: HTTPStatusError, details: NetworkError.Details? = nil) {
        self.error = error
        self.details =
            details ?? NetworkError.Details(kind: .httpStatusError(error), message: "HTTP \(error.statusCode)")
    }

    /// The numeric status code, such as 404.
    public var statusCode: Int { error.statusCode }
    /// The response: status, headers and body (`nil` for a failure built by hand).
    public var response: HTTPErrorResponse? { details.response }
    /// A human-readable explanation, free of credentials.
    public var message: String { details.message }

    /// Equal when the statuses are equal, whatever the responses.
    public static func == (lhs: HTTPStatusFailure, rhs: HTTPStatusFailure) -> Bool { lhs.error == rhs.error }

    /// Hashes the status only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(error) }

    /// Such as `HTTP 404 from GET https://api.example.com/users/7: …`.
    public var description: String { details.message }

    // MARK: The seed's HTTPStatusError values, for matching and comparing

    /// 401 Unauthorized.
    public static var unauthorized: HTTPStatusFailure { HTTPStatusFailure(.unauthorized) }
    /// 403 Forbidden.
    public static var forbidden: HTTPStatusFailure { HTTPStatusFailure(.forbidden) }
    /// 404 Not Found.
    public static var notFound: HTTPStatusFailure { HTTPStatusFailure(.notFound) }
    /// 429 Too Many Requests.
    public static var rateLimited: HTTPStatusFailure { HTTPStatusFailure(.rateLimited) }
    /// 500 Internal Server Error.
    public static var internalServerError: HTTPStatusFailure { HTTPStatusFailure(.internalServerError) }
    /// 503 Service Unavailable.
    public static var serviceUnavailable: HTTPStatusFailure { HTTPStatusFailure(.serviceUnavailable) }
    /// Another 4xx status, such as `.clientError(422)`.
    public static func clientError(_ code: Int) -> HTTPStatusFailure { HTTPStatusFailure(.clientError(code)) }
    /// Another 5xx (or out-of-range) status.
    public static func serverError(_ code: Int) -> HTTPStatusFailure { HTTPStatusFailure(.serverError(code)) }
    /// A 3xx status that reached the service.
    public static func redirect(_ code: Int) -> HTTPStatusFailure { HTTPStatusFailure(.redirect(code)) }
}

extension HTTPStatusFailure: LocalizedError {
    /// The same text as ``message``: what `localizedDescription` shows (an alert, a log line),
    /// free of credentials, instead of Foundation's generic "The operation could not be completed".
    public var errorDescription: String? { message }
}
