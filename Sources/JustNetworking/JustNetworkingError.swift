import Foundation
import GentleNetworking

/// Why a JustNetworking request failed, when the cause is not a transport or parser error
/// (those are delivered unchanged).
public enum JustNetworkingError: Error, Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The router relies on the global base URL, and none is set: call
    /// `NetworkConfiguration.setCurrentURL(_:)` first, or override the router's `baseURL`.
    /// Nothing was sent.
    ///
    /// - Parameter router: The router's description, such as `GET user/12`.
    case baseURLNotSet(router: String)
    /// The server answered with a status outside 200–299.
    ///
    /// - Parameters:
    ///   - statusCode: Such as 404.
    ///   - headers: The response's header fields.
    ///   - body: The response body, complete.
    case unacceptableStatusCode(statusCode: Int, headers: [String: String], body: Data)
    /// The `URLSession` requester received a response that is not an HTTP response (such as from
    /// a `file:` URL).
    case notHTTPResponse
    /// The request cannot be sent as it is, and nothing was sent: a header name that is not an
    /// HTTP token (one with CR/LF would inject a header line), a header value with CR, LF or NUL
    /// (Foundation would drop it silently, even `Authorization`), or a URL that is not `http`
    /// or `https` with a host.
    ///
    /// - Parameter reason: What is wrong; it names the header, never its value.
    case invalidRequest(reason: String)

    /// What went wrong and what to do, in one sentence; the body's size but not its content,
    /// which may hold secrets.
    public var description: String {
        switch self {
        case .baseURLNotSet(let router):
            "No base URL is set for \(router): call NetworkConfiguration.setCurrentURL(_:) first, "
                + "or override the router's baseURL."
        case .unacceptableStatusCode(let statusCode, _, let body):
            "The server answered with HTTP status \(statusCode), outside 200–299 (body: \(body.count) bytes)."
        case .notHTTPResponse:
            "The response was not an HTTP response."
        case .invalidRequest(let reason):
            "The request was not sent: \(reason)"
        }
    }

    /// What `dump(_:)`, `String(reflecting:)` and LLDB's `po` show: the case and its values, except that a status
    /// error's headers have their credentials replaced (`Set-Cookie`, …, as the core's log
    /// records show them) and its body is shown by size with its start redacted. The associated
    /// values keep everything as received.
    public var customMirror: Mirror {
        switch self {
        case .baseURLNotSet(let router):
            Mirror(self, children: ["case": "baseURLNotSet", "router": router], displayStyle: .enum)
        case .unacceptableStatusCode(let statusCode, let headers, let body):
            Mirror(
                self,
                children: [
                    "case": "unacceptableStatusCode", "statusCode": statusCode,
                    "headers": Redactor.reflected(headers: headers), "body": Redactor.reflected(body: body),
                ], displayStyle: .enum)
        case .notHTTPResponse:
            Mirror(self, children: ["case": "notHTTPResponse"], displayStyle: .enum)
        case .invalidRequest(let reason):
            Mirror(self, children: ["case": "invalidRequest", "reason": reason], displayStyle: .enum)
        }
    }
}
