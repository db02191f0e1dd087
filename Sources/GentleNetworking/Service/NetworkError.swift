import Foundation

/// The error thrown by ``HTTPNetworkService``: what kind of failure, plus the context needed to
/// act on it (the response body and headers, the URL, the underlying error).
///
/// It is a struct with a ``kind`` rather than an enum, so new context can be added without
/// breaking callers. Seed-style matching still works:
/// ```swift
/// do { … } catch NetworkError.httpStatusError(.notFound) {
///     // 404
/// } catch let error as NetworkError {
///     if case .httpStatusError(let status) = error.kind { … }
///     let payload = error.response?.body
/// }
/// ```
/// Cancellation is not a `NetworkError`: a cancelled call throws `CancellationError`.
public struct NetworkError: Error, Sendable, CustomStringConvertible {
    /// The category of a ``NetworkError``.
    public enum Kind: Sendable, Hashable {
        /// The transport returned something that is not a usable HTTP response.
        case invalidResponseType
        /// The server answered with a non-2xx status; ``NetworkError/response`` holds it.
        case httpStatusError(HTTPStatusError)
        /// The API environment has no base URL.
        case missingBaseURL
        /// The endpoint and environment do not form a valid URL.
        case invalidURL
        /// The request body could not be encoded.
        case encodingFailed
        /// A 2xx body could not be decoded; ``NetworkError/decodingFailure`` says where and why.
        case decodingFailed
        /// The request was refused before anything was sent: a header name that is not a token,
        /// a header value with CR, LF or NUL, or a URL that is not `http`/`https`. The message
        /// names the header, never its value.
        case invalidRequest
        /// The request did not complete: see ``TransportError/Code``.
        case transport(TransportError.Code)
        /// The auth service failed to provide credentials.
        case authorizationFailed
        /// A 304 Not Modified arrived for a request with no cached entry to revalidate, so
        /// there is no body to return.
        case unexpectedNotModified
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// A human-readable explanation, free of credentials.
    public let message: String
    /// The request URL, when known.
    public let url: URL?
    /// The HTTP response, for ``Kind/httpStatusError(_:)`` and ``Kind/decodingFailed``.
    public let response: HTTPErrorResponse?
    /// Where and why decoding failed, for ``Kind/decodingFailed``.
    public let decodingFailure: DecodingFailure?
    /// The error that caused this one, such as a `DecodingError` or a ``TransportError``.
    public let underlyingError: (any Error)?

    /// Creates an error.
    public init(
        _ kind: Kind,
        message: String,
        url: URL? = nil,
        response: HTTPErrorResponse? = nil,
        decodingFailure: DecodingFailure? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.url = url
        self.response = response
        self.decodingFailure = decodingFailure
        self.underlyingError = underlyingError
    }

    /// The HTTP status category, when the failure is an HTTP status.
    public var statusError: HTTPStatusError? {
        if case .httpStatusError(let status) = kind { return status }
        return nil
    }

    /// The HTTP status code, when a response was received.
    public var statusCode: Int? { response?.statusCode }

    /// The message, prefixed with the kind.
    public var description: String {
        "NetworkError.\(kind): \(message)"
    }

    // MARK: Seed-compatible matching

    /// A pattern that matches any error of kind ``Kind/invalidResponseType``.
    public static let invalidResponseType = NetworkError(.invalidResponseType, message: "pattern")

    /// A pattern that matches errors of kind `.httpStatusError(status)`.
    ///
    /// Lets seed code such as `catch NetworkError.httpStatusError(.unauthorized)` compile.
    public static func httpStatusError(_ status: HTTPStatusError) -> NetworkError {
        NetworkError(.httpStatusError(status), message: "HTTP \(status.statusCode)")
    }

    /// Matches an error against a pattern by ``kind``, ignoring context.
    public static func ~= (pattern: NetworkError, value: any Error) -> Bool {
        (value as? NetworkError)?.kind == pattern.kind
    }

    /// Matches a `NetworkError` against a pattern by ``kind``, ignoring context.
    public static func ~= (pattern: NetworkError, value: NetworkError) -> Bool {
        value.kind == pattern.kind
    }
}
