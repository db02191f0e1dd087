/// The category of a non-2xx HTTP status, as the service reports it.
///
/// Pattern-match on it to react to specific statuses:
/// ```swift
/// catch NetworkError.httpStatusError(.unauthorized) { signOut() }
/// ```
public enum HTTPStatusError: Error, Sendable, Hashable {
    /// 401 Unauthorized.
    case unauthorized
    /// 403 Forbidden.
    case forbidden
    /// 404 Not Found.
    case notFound
    /// 429 Too Many Requests.
    case rateLimited
    /// 500 Internal Server Error.
    case internalServerError
    /// 503 Service Unavailable.
    case serviceUnavailable
    /// Any other 4xx status.
    case clientError(Int)
    /// Any other 5xx status, and any status outside 200–599 (such as 600 or 101), as the seed
    /// maps them.
    case serverError(Int)
    /// A 3xx status that reached the service (redirects are normally followed by the transport).
    case redirect(Int)

    /// Categorizes `statusCode`.
    ///
    /// Returns `nil` for the 2xx statuses only. A value outside 300–599 (1xx, 600 and above,
    /// negative) is ``serverError(_:)``, as in the seed: a server that sends one is broken.
    public init?(statusCode: Int) {
        switch statusCode {
        case 401: self = .unauthorized
        case 403: self = .forbidden
        case 404: self = .notFound
        case 429: self = .rateLimited
        case 500: self = .internalServerError
        case 503: self = .serviceUnavailable
        case 300..<400: self = .redirect(statusCode)
        case 400..<500: self = .clientError(statusCode)
        case 200..<300: return nil
        default: self = .serverError(statusCode)
        }
    }

    /// The numeric status code.
    public var statusCode: Int {
        switch self {
        case .unauthorized: 401
        case .forbidden: 403
        case .notFound: 404
        case .rateLimited: 429
        case .internalServerError: 500
        case .serviceUnavailable: 503
        case .clientError(let code), .serverError(let code), .redirect(let code): code
        }
    }
}
