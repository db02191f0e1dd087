import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request that did not complete with a usable HTTP response: it could not connect, timed out,
/// lost the connection, failed TLS or redirected too often, or a decorator could not recover
/// the response it got (a 401 whose refresh failed, a 304 with nothing cached).
///
/// Transports and decorators throw it (cancellation excepted: that is `CancellationError`), and
/// ``HTTPNetworkService`` wraps it in ``NetworkError`` with kind ``NetworkError/Kind/transport(_:)``;
/// ``Code/authenticationFailed`` and ``Code/unexpectedNotModified`` become the status kinds they
/// stand for.
public struct TransportError: Error, Sendable, CustomStringConvertible, CustomReflectable {
    /// The category of a transport failure.
    public enum Code: Sendable, Hashable {
        /// The host name could not be resolved.
        case cannotResolveHost
        /// No connection could be made (refused, unreachable).
        case cannotConnect
        /// The connect or total timeout elapsed.
        case timedOut
        /// The connection was closed or reset before the response was complete.
        case connectionLost
        /// The body was shorter than its `Content-Length`.
        case truncatedBody
        /// The TLS handshake or certificate validation failed.
        case tlsFailure
        /// A pinned key or certificate did not match.
        case pinMismatch
        /// More redirects than allowed, or a redirect loop.
        case tooManyRedirects
        /// The server sent something that is not valid HTTP.
        case badResponse
        /// The device has no network.
        case notConnectedToInternet
        /// The request was refused before anything was sent: a URL that is not `http` or
        /// `https`, a header name that is not a token, or a header value with CR, LF or NUL
        /// (see ``RequestValidator``).
        case invalidRequest
        /// The response (its decoded body, or its header section) is larger than the limit
        /// configured for it; the connection was closed. See ``ResponseLimits``.
        case responseTooLarge
        /// A 401 could not be recovered by ``ReauthTransport``: the token refresh failed, timed
        /// out, or its loop guard tripped. ``TransportError/underlyingError`` is the
        /// ``ReauthError`` and ``TransportError/response`` the 401 as received.
        /// ``HTTPNetworkService`` throws it as ``NetworkError`` `.httpStatusError(.unauthorized)`.
        case authenticationFailed
        /// A 304 Not Modified arrived at ``ETagTransport`` for a request it had no cached entry
        /// for, so there is no body to return; ``TransportError/response`` is the 304.
        /// ``HTTPNetworkService`` throws it as ``NetworkError/Kind/unexpectedNotModified``.
        case unexpectedNotModified
        /// Anything else; ``TransportError/underlyingError`` has the details.
        case other
    }

    /// What went wrong.
    public let code: Code
    /// The URL being requested.
    public let url: URL?
    /// A human-readable explanation.
    public let message: String
    /// The platform error this was mapped from, such as a `URLError`.
    public let underlyingError: (any Error)?
    /// The HTTP response that a decorator could not turn into a result (the 401 of
    /// ``Code/authenticationFailed``, the 304 of ``Code/unexpectedNotModified``), with its
    /// headers and body; `nil` when no response was received.
    public let response: HTTPErrorResponse?

    /// Creates a transport error.
    public init(
        _ code: Code, url: URL?, message: String, underlyingError: (any Error)? = nil,
        response: HTTPErrorResponse? = nil
    ) {
        self.code = code
        self.url = url
        self.message = message
        self.underlyingError = underlyingError
        self.response = response
    }

    /// This error with `response` instead of its own (the same response, its mirror's text
    /// scrubbed of the request's credentials).
    func replacingResponse(_ response: HTTPErrorResponse?) -> TransportError {
        TransportError(code, url: url, message: message, underlyingError: underlyingError, response: response)
    }

    /// The code and message.
    public var description: String {
        "TransportError.\(code): \(message)"
    }

    /// What `dump(_:)`, `String(reflecting:)` and LLDB's `po` show: the code, the message, the URL redacted as log
    /// records show it, the underlying error (a `URLError` by its code only: its user info holds
    /// the URL as sent) and the response (redacted, see ``HTTPErrorResponse``). The properties
    /// keep everything as it was.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "code": code,
                "url": Redactor.reflected(url),
                "message": message,
                "underlyingError": Redactor.reflected(underlyingError),
                "response": response as Any,
            ], displayStyle: .struct)
    }

    /// The message of the ``Code/badResponse`` error for a response that is not HTTP (a
    /// `URLProtocol` of the session's answered with a plain `URLResponse`).
    package static let notHTTPResponseMessage = "The response is not an HTTP response."

    /// Maps a `URLError` to a transport error, or returns `CancellationError` for a cancellation.
    public static func map(_ error: URLError, url: URL?) -> any Error {
        let code: Code
        switch error.code {
        case .cancelled: return CancellationError()
        case .cannotFindHost, .dnsLookupFailed: code = .cannotResolveHost
        case .cannotConnectToHost: code = .cannotConnect
        case .timedOut: code = .timedOut
        case .networkConnectionLost: code = .connectionLost
        case .notConnectedToInternet: code = .notConnectedToInternet
        case .httpTooManyRedirects, .redirectToNonExistentLocation: code = .tooManyRedirects
        // A URL the system does not take (corelibs: one whose host libcurl refuses, `a$b`): the
        // caller's, nothing sent, as on CurlTransport. corelibs also reports libcurl's
        // "unsupported protocol" this way, which is an HTTP/0.9 reply: the message decides.
        case .badURL: code = .invalidRequest
        case .unsupportedURL:
            let specific = classifyUnknown(error.localizedDescription)
            code = specific == .other ? .invalidRequest : specific
        case .badServerResponse:
            // corelibs reports libcurl's "Empty reply from server" (CURLE_GOT_NOTHING) this way,
            // which CurlTransport gives as .connectionLost (a retry may help; RetryTransport and
            // an event source's reconnection decide by the code).
            let specific = classifyUnknown(error.localizedDescription)
            code = specific == .connectionLost ? .connectionLost : .badResponse
        case .cannotParseResponse, .zeroByteResource, .cannotDecodeRawData, .cannotDecodeContentData:
            code = .badResponse
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            code = .tlsFailure
        default: code = classifyUnknown(error.localizedDescription)
        }
        // corelibs' text is libcurl's, which may quote what the server sent: one printable line.
        return TransportError(
            code, url: url, message: PrintableText.escaping(error.localizedDescription), underlyingError: error)
    }

    /// swift-corelibs-foundation reports many libcurl failures as `URLError.unknown`, keeping
    /// only libcurl's message; these are the messages that identify them, so that the same
    /// fault gives the same code as on ``CurlTransport``.
    static func classifyUnknown(_ message: String) -> Code {
        let lowered = message.lowercased()
        func has(_ fragments: String...) -> Bool { fragments.contains { lowered.contains($0) } }
        if lowered.contains("transfer closed with") && lowered.contains("remaining") { return .truncatedBody }
        // libcurl before 8.6 reports its own size caps (a header line above 100 KiB) as out of
        // memory; corelibs passes only that message on.
        if has(
            "too large response headers", "header too large", "header overflow", "maximum file size exceeded",
            "out of memory", "avoided giant realloc")
        {
            return .responseTooLarge
        }
        if has(
            "received http/0.9", "unsupported response code", "weird server reply", "unsupported http version",
            "invalid status line", "chunked-encoded data", "hexadecimal", "content-length",
            "unrecognized content encoding", "content encodings",
            "error while processing content unencoding", "invalid http header", "header without colon",
            "nul byte in header",
            // corelibs' header callback refused a line it could not parse (such as one of spaces).
            "failed writing header")
        {
            return .badResponse
        }
        if has(
            "ssl certificate problem", "ssl peer certificate", "certificate verify", "self-signed", "self signed",
            "unable to get local issuer", "no alternative certificate subject name", "ssl_connect",
            "ssl connect error", "tls connect error", "certificate has expired", "wrong version number")
        {
            return .tlsFailure
        }
        if has("connection reset", "recv failure", "empty reply from server", "send failure") {
            return .connectionLost
        }
        return .other
    }
}

extension TransportError: LocalizedError {
    /// The same text as ``message``: what `localizedDescription` shows (an alert, a log line),
    /// free of credentials, instead of Foundation's generic "The operation could not be completed".
    public var errorDescription: String? { message }
}
