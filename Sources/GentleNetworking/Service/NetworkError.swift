import Foundation

/// The error thrown by ``HTTPNetworkService``: an enum with the seed's two cases, each carrying
/// everything needed to act on the failure (the response body and headers, the URL, where
/// decoding failed, the underlying error).
///
/// Seed code matches it unchanged, and ``kind`` tells the failures apart in more detail:
/// ```swift
/// do { … } catch NetworkError.httpStatusError(.unauthorized) {
///     signOut()
/// } catch let error as NetworkError {
///     switch error {
///     case .httpStatusError(let status):
///         let payload = status.response?.body       // the server's error body
///     case .invalidResponseType:
///         if error.kind == .transport(.timedOut) { … }
///     }
/// }
/// ```
///
/// - ``httpStatusError(_:)``: the server answered with a non-2xx status.
/// - ``invalidResponseType(_:)``: every other failure, where no usable response came back: the
///   transport failed, the body did not decode, the request could not be built. Its
///   ``Details/kind`` says which.
///
/// Cancellation is not a `NetworkError`: a cancelled call throws `CancellationError`.
public enum NetworkError: Error, Sendable, CustomStringConvertible {
    /// No usable response: the transport failed, the 2xx body did not decode, the request could
    /// not be built, or the response was not HTTP. ``Details/kind`` says which; it is never
    /// ``Kind/httpStatusError(_:)``.
    ///
    /// `case .invalidResponseType:` matches it whatever the details, and
    /// ``invalidResponseType`` (without arguments) builds one, as in the seed.
    case invalidResponseType(Details)
    /// The server answered with a non-2xx status. The ``HTTPStatusFailure`` compares and matches
    /// like an ``HTTPStatusError`` (`.unauthorized`, `.clientError(422)`) and also holds the
    /// response: its status, headers and body.
    case httpStatusError(HTTPStatusFailure)

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

    /// What a ``NetworkError`` knows about a failure.
    public struct Details: Sendable, CustomReflectable {
        /// What kind of failure this is.
        public let kind: Kind
        /// A human-readable explanation, free of credentials.
        public let message: String
        /// The request URL, when known.
        public let url: URL?
        /// The HTTP response, for status errors, decoding failures and unusable statuses.
        public let response: HTTPErrorResponse?
        /// Where and why decoding failed, for ``Kind/decodingFailed``.
        public let decodingFailure: DecodingFailure?
        /// The error that caused this one, such as a `DecodingError` or a ``TransportError``.
        public let underlyingError: (any Error)?
        /// The request's timings, sizes and steps up to the failure, when the caller asked for
        /// them (``HTTPNetworkService/requestWithMetrics(to:via:)``); `nil` otherwise.
        public internal(set) var metrics: RequestMetrics?

        /// Creates details; see ``NetworkError/init(_:message:url:response:decodingFailure:underlyingError:)``.
        public init(
            kind: Kind,
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

        /// What `dump(_:)`, `String(reflecting:)` and LLDB's `po` show: every property, with the URL redacted as log
        /// records show it, the underlying error's `URLError` by its code only (its user info
        /// holds the URL as sent) and the response redacted (see ``HTTPErrorResponse``). The
        /// properties keep everything as it was.
        public var customMirror: Mirror {
            Mirror(
                self,
                children: [
                    "kind": kind,
                    "message": message,
                    "url": Redactor.reflected(url),
                    "response": response as Any,
                    "decodingFailure": decodingFailure as Any,
                    "underlyingError": Redactor.reflected(underlyingError),
                    "metrics": metrics as Any,
                ], displayStyle: .struct)
        }
    }

    /// Creates an error of `kind`: ``httpStatusError(_:)`` for a status kind, otherwise
    /// ``invalidResponseType(_:)``.
    public init(
        _ kind: Kind,
        message: String,
        url: URL? = nil,
        response: HTTPErrorResponse? = nil,
        decodingFailure: DecodingFailure? = nil,
        underlyingError: (any Error)? = nil
    ) {
        let details = Details(
            kind: kind, message: message, url: url, response: response, decodingFailure: decodingFailure,
            underlyingError: underlyingError)
        if case .httpStatusError(let status) = kind {
            self = .httpStatusError(HTTPStatusFailure(status, details: details))
        } else {
            self = .invalidResponseType(details)
        }
    }

    /// A response that is not HTTP, as the seed's value `NetworkError.invalidResponseType`.
    public static var invalidResponseType: NetworkError {
        NetworkError(.invalidResponseType, message: "The response was not an HTTP response.")
    }

    /// Everything known about the failure.
    public var details: Details {
        switch self {
        case .invalidResponseType(let details): details
        case .httpStatusError(let status): status.details
        }
    }

    /// What kind of failure this is.
    public var kind: Kind { details.kind }
    /// A human-readable explanation, free of credentials.
    public var message: String { details.message }
    /// The request URL, when known.
    public var url: URL? { details.url }
    /// The HTTP response, for ``Kind/httpStatusError(_:)`` and ``Kind/decodingFailed``.
    public var response: HTTPErrorResponse? { details.response }
    /// Where and why decoding failed, for ``Kind/decodingFailed``.
    public var decodingFailure: DecodingFailure? { details.decodingFailure }
    /// The error that caused this one, such as a `DecodingError` or a ``TransportError``.
    public var underlyingError: (any Error)? { details.underlyingError }

    /// The request's timings, sizes and steps up to the failure, for an error thrown by
    /// ``HTTPNetworkService/requestWithMetrics(to:via:)``: every exchange that reached the wire
    /// (a status error's included), every retry and refresh. `nil` for the other calls.
    public var metrics: RequestMetrics? { details.metrics }

    /// This error with `metrics` attached (unchanged when `metrics` is `nil`).
    func attaching(_ metrics: RequestMetrics?) -> NetworkError {
        guard let metrics else { return self }
        var details = self.details
        details.metrics = metrics
        switch self {
        case .invalidResponseType: return .invalidResponseType(details)
        case .httpStatusError(let status): return .httpStatusError(HTTPStatusFailure(status.error, details: details))
        }
    }

    /// The HTTP status category, when the failure is an HTTP status.
    public var statusError: HTTPStatusError? {
        if case .httpStatusError(let status) = self { return status.error }
        return nil
    }

    /// The HTTP status code, when a response was received.
    public var statusCode: Int? { response?.statusCode }

    /// The message, prefixed with the kind.
    public var description: String {
        "NetworkError.\(kind): \(message)"
    }
}

extension NetworkError {
    /// `.authorizationFailed` for an auth service whose credential could not be read (`error`
    /// is its store's), for the request to `url`: before sending, and while a 401 is handled.
    static func authorizationFailure(_ error: any Error, url: URL?) -> NetworkError {
        NetworkError(
            .authorizationFailed,
            message: "The auth service could not provide credentials: \(Redactor.describing(error))",
            url: url,
            underlyingError: error)
    }
}

extension NetworkError: LocalizedError {
    /// The same text as ``message``: what `localizedDescription` shows (an alert, a log line),
    /// free of credentials, instead of Foundation's generic "The operation could not be completed".
    public var errorDescription: String? { message }
}
