import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response with a status other than 2xx and 401 (which is ``NetworkError/unauthenticated``):
/// its status, headers and body, nothing lost.
public struct HttpError: Error, Sendable, CustomStringConvertible, CustomReflectable {
    /// The HTTP status code.
    public let statusCode: Int
    /// The response headers, as the response spelled them.
    public let headers: [String: String]
    /// The body, read as JSON where possible: a body of at most ``maxParsedBytes``; a larger one
    /// is `.raw` (parsed, 100 MiB of `[0,0,…]` took about 3 GB as Foundation objects).
    public let body: HttpResponseType
    /// The largest body ``body`` parses as JSON: 1 MiB.
    public static let maxParsedBytes = 1 << 20
    /// The body, exactly as received.
    public let data: Data

    /// Creates the error for `response` and its body.
    public init(response: HTTPURLResponse, data: Data?) {
        self.init(statusCode: response.statusCode, headers: response.stringHeaders, data: data ?? Data())
    }

    /// Creates the error from its parts.
    public init(statusCode: Int, headers: [String: String], data: Data) {
        self.statusCode = statusCode
        self.headers = headers
        self.data = data
        self.body = data.count <= Self.maxParsedBytes ? data.toHttpResponse() : .raw(data)
    }

    /// Such as `HTTP 404 (12 bytes)`; the body itself is left out, as it may hold personal data.
    public var description: String {
        "HTTP \(statusCode) (\(data.count) bytes)"
    }

    /// The value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// What `dump(_:)`, `String(reflecting:)` and LLDB's `po` show: the status, the headers with credentials replaced
    /// (`Set-Cookie`, …, as the core's log records show them) and the body's size with its
    /// start redacted. ``headers``, ``body`` and ``data`` keep everything as received.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "statusCode": statusCode, "headers": Redactor.reflected(headers: headers),
                "data": Redactor.reflected(body: data),
            ], displayStyle: .struct)
    }
}
