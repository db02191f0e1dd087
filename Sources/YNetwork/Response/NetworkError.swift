import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The errors ``NetworkManager`` throws besides ``HttpError``. Transport failures that mean "no
/// network" or "bad TLS" are mapped to ``noInternet(_:)`` and ``invalidSSL(_:)``; any other
/// transport error (a timeout, cancellation) is thrown as it is, except a request the transport
/// refused to send (`TransportError` `.invalidRequest`), which is ``serialization(_:)``.
public enum NetworkError: Error, Equatable, CustomReflectable {
    /// A relative path with no base path in the request or the configuration.
    case noBasePath
    /// The path, base path and query do not form a URL.
    case invalidURL
    /// The manager or engine was used in a state that needs configuration.
    case notConfigured
    /// The response was not an HTTP response.
    case invalidResponse
    /// A JSON response had an empty body.
    case noData
    /// The response type does not produce the requested Swift type (for example `.none` and a
    /// type other than ``EmptyNetworkResponse``).
    case unexpectedResponse(type: ResponseContentType)
    /// The body could not be decoded; the decoder's error.
    case deserialization(any Error)
    /// The request could not be turned into an HTTP message, and nothing was sent: the body's
    /// encoder failed (its error), or a header or the URL cannot be sent (the core's
    /// `TransportError` with code `.invalidRequest`: a header name that is not an HTTP token, a
    /// value with CR, LF or NUL, a URL that is not `http`/`https` with a host; its message names
    /// the header, never the value).
    case serialization(any Error)
    /// The response type needs a decoder and the parser factory has none.
    case noDecoder
    /// The request type needs an encoder and the parser factory has none.
    case noEncoder
    /// The server answered 401, also after one credential refresh when a session manager is set.
    case unauthenticated
    /// TLS failed: an untrusted or invalid certificate, a failed handshake, or a pin mismatch.
    case invalidSSL(any Error)
    /// The server could not be reached: no network, name not resolved, connection refused or lost.
    case noInternet(any Error)

    /// Cases are equal when their kinds are, compared as Y-Network compares them: wrapped errors
    /// by `localizedDescription`, and ``noInternet(_:)``'s by `NSError` code and domain (so a
    /// `URLError` with a failing URL in its user info equals the same code without one).
    public static func == (lhs: NetworkError, rhs: NetworkError) -> Bool {
        switch (lhs, rhs) {
        case (.noBasePath, .noBasePath), (.invalidURL, .invalidURL), (.notConfigured, .notConfigured),
            (.invalidResponse, .invalidResponse), (.noData, .noData), (.noDecoder, .noDecoder),
            (.noEncoder, .noEncoder), (.unauthenticated, .unauthenticated):
            return true
        case (.unexpectedResponse(let left), .unexpectedResponse(let right)):
            return left == right
        case (.deserialization(let left), .deserialization(let right)),
            (.serialization(let left), .serialization(let right)),
            (.invalidSSL(let left), .invalidSSL(let right)):
            return left.localizedDescription == right.localizedDescription
        case (.noInternet(let left), .noInternet(let right)):
            let (leftError, rightError) = (left as NSError, right as NSError)
            return leftError.code == rightError.code && leftError.domain == rightError.domain
        default:
            return false
        }
    }

    /// What `dump(_:)`, `String(reflecting:)` and LLDB's `po` show: the case, and a wrapped
    /// error as the core shows one beneath another (a `URLError` or an `NSError` by its code,
    /// since its user info holds the failing URL as it was sent; the core's errors with their
    /// own redacting mirrors).
    public var customMirror: Mirror {
        // Shaped like the default mirror of an enum (one child named after the case, none for a
        // case without a value), so printing the error shows what it did: `invalidURL`,
        // `noInternet(…)`.
        func wrapped(_ name: String, _ error: any Error) -> Mirror {
            Mirror(self, children: [name: Redactor.reflected(error)], displayStyle: .enum)
        }
        switch self {
        case .deserialization(let error): return wrapped("deserialization", error)
        case .serialization(let error): return wrapped("serialization", error)
        case .invalidSSL(let error): return wrapped("invalidSSL", error)
        case .noInternet(let error): return wrapped("noInternet", error)
        case .unexpectedResponse(let type):
            // Printed `unexpectedResponse(type: …)`, as the default mirror prints it (a labelled
            // one-element tuple cannot be made).
            return Mirror(
                self, children: ["unexpectedResponse": LabeledPayload(text: "type: \(String(reflecting: type))")],
                displayStyle: .enum)
        case .noBasePath, .invalidURL, .notConfigured, .invalidResponse, .noData, .noDecoder, .noEncoder,
            .unauthenticated:
            return Mirror(self, children: [:], displayStyle: .enum)
        }
    }

    /// A case's labelled value as the default mirror prints it.
    private struct LabeledPayload: CustomDebugStringConvertible {
        let text: String
        var debugDescription: String { text }
    }

    /// `error` as a ``NetworkError`` where one applies (unreachable network, TLS, a request the
    /// transport refused to send, a 401 a `ReauthTransport` in the stack could not recover),
    /// else `error`. A cancellation (`CancellationError`, from a cancelled task or a cancelled
    /// transfer) is `URLError(.cancelled)`, what Y-Network's `URLSession` tasks reported, so code
    /// that checks `(error as? URLError)?.code == .cancelled` keeps ignoring cancellations.
    public static func mapping(_ error: any Error) -> any Error {
        if error is CancellationError { return URLError(.cancelled) }
        if error is NetworkError || error is HttpError { return error }
        if let transport = error as? TransportError {
            switch transport.code {
            case .tlsFailure, .pinMismatch: return NetworkError.invalidSSL(transport)
            case .invalidRequest: return NetworkError.serialization(transport)
            case .authenticationFailed: return NetworkError.unauthenticated
            case .cannotResolveHost, .cannotConnect, .connectionLost, .notConnectedToInternet:
                return NetworkError.noInternet(transport)
            default: return transport
            }
        }
        // An `NSError` in `NSURLErrorDomain` (what a `URLProtocol` or a mock reports) is mapped by
        // its code, as Y-Network does, on Linux too, where it does not bridge to `URLError`.
        let nsError = error as NSError
        // (`URLError.Code(rawValue:)` is failable in corelibs, not on Apple platforms.)
        if !(error is URLError), nsError.domain == NSURLErrorDomain,
            let code = URLError.Code(rawValue: nsError.code) as URLError.Code?
        {
            let mapped = mapping(URLError(code))
            return mapped is URLError ? error : Self.rewrapping(mapped, cause: error)
        }
        if let url = error as? URLError {
            switch url.code {
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
                return NetworkError.invalidSSL(url)
            case .cannotFindHost, .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet,
                .dnsLookupFailed:
                return NetworkError.noInternet(url)
            default: return url
            }
        }
        return error
    }

    /// `mapped` (a case made for a `URLError`) carrying `cause`, the error as it was thrown.
    private static func rewrapping(_ mapped: any Error, cause: any Error) -> any Error {
        switch mapped as? NetworkError {
        case .invalidSSL: return NetworkError.invalidSSL(cause)
        case .noInternet: return NetworkError.noInternet(cause)
        default: return mapped
        }
    }
}
