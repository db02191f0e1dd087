import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The parts of an HTTP response that an error keeps, so the caller can read the server's
/// error payload.
public struct HTTPErrorResponse: Sendable, Hashable {
    /// The status code, such as 404.
    public let statusCode: Int
    /// The response headers, with the names as the server sent them.
    public let headers: [String: String]
    /// The full response body, unredacted (it is the caller's data). Empty when there was none.
    public let body: Data
    /// The URL the response came from, after redirects.
    public let url: URL?

    /// Creates a snapshot of a response.
    public init(statusCode: Int, headers: [String: String], body: Data, url: URL?) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// Captures `response` and `body`.
    public init(_ response: HTTPURLResponse, body: Data) {
        self.init(statusCode: response.statusCode, headers: response.stringHeaders, body: body, url: response.url)
    }

    /// The value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// The body decoded as UTF-8 text, or `nil` when it is not valid UTF-8.
    public var bodyText: String? {
        String(data: body, encoding: .utf8)
    }

    /// Decodes the body as `T`, such as your API's error payload.
    public func decodeBody<T: Decodable>(as type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: body)
    }
}

extension HTTPErrorResponse: CustomReflectable {
    /// What `dump(_:)` and debuggers show: the status, the headers with credentials replaced
    /// (`Set-Cookie`, `Authorization`, …, as log records show them), the body's size and its
    /// start redacted, and the URL without user info or secret query values. The properties
    /// themselves keep everything as received.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "statusCode": statusCode,
                "headers": Redactor.reflected(headers: headers),
                "body": Redactor.reflected(body: body),
                "url": Redactor.reflected(url),
            ], displayStyle: .struct)
    }
}

extension HTTPURLResponse {
    /// The header fields as strings, as the response spelled their names.
    package var stringHeaders: [String: String] {
        var headers: [String: String] = [:]
        for (key, value) in allHeaderFields {
            headers[String(describing: key)] = String(describing: value)
        }
        return headers
    }
}
