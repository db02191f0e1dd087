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
    /// What the mirror shows of the headers and the body, also scrubbed of the credential
    /// values of the request that got this response (a server echoing a token in its error
    /// body or a header of its own), made when the error is made (``scrubbingShownText(of:)``);
    /// `nil`: redacted by name only, when the mirror is read. Not part of equality: it is
    /// derived from the other properties.
    private var shownText: ShownText?

    /// See ``shownText``.
    private struct ShownText: Sendable {
        let headers: [String: String]
        let body: String
    }

    /// Creates a snapshot of a response.
    public init(statusCode: Int, headers: [String: String], body: Data, url: URL?) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// This response with what its mirror shows scrubbed of `secrets` too (the credential
    /// values of the request that got it, ``Redactor/credentialValues(of:alsoHeaders:)``), so
    /// that `dump(error)` hides an echoed token as the error's message does. The values are
    /// not kept: the redacted text is made now. Unchanged when `secrets` is empty.
    func scrubbingShownText(of secrets: [String]) -> HTTPErrorResponse {
        guard !secrets.isEmpty else { return self }
        var copy = self
        copy.shownText = ShownText(
            headers: Redactor.reflected(headers: headers, scrubbing: secrets),
            body: Redactor.reflected(body: body, scrubbing: secrets))
        return copy
    }

    /// Equal when the status, headers, body and URL are.
    public static func == (lhs: HTTPErrorResponse, rhs: HTTPErrorResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.headers == rhs.headers && lhs.body == rhs.body && lhs.url == rhs.url
    }

    /// Hashes the status, headers, body and URL.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(url)
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
    /// What `dump(_:)`, `String(reflecting:)` and LLDB's `po` show (they read this mirror;
    /// a debugger's variable view reads the stored properties instead): the status, the headers
    /// with credentials replaced (`Set-Cookie`, `Authorization`, …, as log records show them),
    /// the body's size and its start redacted, each also scrubbed of the request's credential
    /// values when the error was made by ``HTTPNetworkService`` or ``ReauthTransport``, and the
    /// URL without user info or secret query values. The properties themselves keep everything
    /// as received.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "statusCode": statusCode,
                "headers": shownText?.headers ?? Redactor.reflected(headers: headers),
                "body": shownText?.body ?? Redactor.reflected(body: body),
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
