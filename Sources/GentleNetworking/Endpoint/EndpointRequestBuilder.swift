import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns an endpoint and an environment into a `URLRequest`.
///
/// Exposed so that callers (and other transports) can see exactly the request the service
/// would send, without sending it.
public struct EndpointRequestBuilder: Sendable {
    /// The encoder used for JSON bodies.
    public let jsonEncoder: JSONEncoder

    /// Creates a builder that encodes bodies with `jsonEncoder` (a plain `JSONEncoder` by default).
    public init(jsonEncoder: JSONEncoder = JSONEncoder()) {
        self.jsonEncoder = jsonEncoder
    }

    /// Builds the request, without credentials.
    ///
    /// - Throws: ``NetworkError`` with kind ``NetworkError/Kind/missingBaseURL`` when the
    ///   environment has no base URL, ``NetworkError/Kind/invalidURL`` when the result is not
    ///   a valid absolute URL, ``NetworkError/Kind/encodingFailed`` when the body cannot be
    ///   encoded, and ``NetworkError/Kind/invalidRequest`` for a header name that is not a token
    ///   or a header value with CR, LF or NUL (named in the message; the value never is).
    public func makeRequest(
        for endpoint: any EndpointProtocol,
        in environment: any APIEnvironmentProtocol
    ) throws(NetworkError) -> URLRequest {
        try makeRequest(for: endpoint, baseURL: environment._baseURL)
    }

    /// Builds the request for `endpoint` joined to `baseURL`, without credentials; throws as
    /// ``makeRequest(for:in:)`` does (``NetworkError/Kind/missingBaseURL`` for `nil` or
    /// ``DefaultAPIEnvironment/unsetBaseURL``).
    public func makeRequest(for endpoint: any EndpointProtocol, baseURL: URL?) throws(NetworkError) -> URLRequest {
        guard let baseURL, baseURL != DefaultAPIEnvironment.unsetBaseURL else {
            throw NetworkError(.missingBaseURL, message: "The API environment has no base URL.")
        }
        let url = try Self.url(base: baseURL, path: endpoint.path, query: endpoint.query)
        var request = URLRequest(url: url)
        // GET is URLRequest's default; setting it anyway costs a copy and a check on Linux.
        if endpoint.method != .get { request.httpMethod = endpoint.method.rawValue }
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let timeout = endpoint.timeoutInterval.flatMap(Clamp.timeout) {
            request.timeoutInterval = timeout
        }
        if let body = endpoint.body {
            do {
                request.httpBody = try jsonEncoder.encode(body)
            } catch {
                throw NetworkError(
                    .encodingFailed,
                    message: "The body of \(endpoint.method.rawValue) \(endpoint.path) could not be encoded.",
                    url: url,
                    underlyingError: error
                )
            }
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in endpoint.headers.sorted(by: { $0.key < $1.key }) {
            do throws(TransportError) {
                try RequestValidator.setHeader(value, named: name, on: &request)
            } catch {
                throw NetworkError(.invalidRequest, message: error.message, url: url, underlyingError: error)
            }
        }
        return request
    }

    /// Joins `path` to `base` with exactly one `/` and appends strictly encoded query items.
    static func url(base: URL, path: String, query: [URLQueryItem]?) throws(NetworkError) -> URL {
        // Built as text from the base's (already percent-encoded) absolute string: a URLComponents
        // round trip costs several times more per request on Linux.
        // Scanned as UTF-8 bytes: Character-level and Foundation string searches cost more here
        // than the rest of the function.
        let absolute = base.absoluteString
        let bytes = absolute.utf8
        let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let mark = bytes[..<end].firstIndex(of: UInt8(ascii: "?"))
        let existingQuery = mark.map { absolute[bytes.index(after: $0)..<end] }
        let beforeQuery = mark ?? end
        guard let colon = bytes[..<beforeQuery].firstIndex(of: UInt8(ascii: ":")),
            bytes[bytes.index(after: colon)..<beforeQuery].starts(with: "//".utf8)
        else {
            throw NetworkError(.invalidURL, message: "The base URL \(base) is not an absolute URL.")
        }
        let authorityStart = bytes.index(colon, offsetBy: 3)
        let pathStart = bytes[authorityStart..<beforeQuery].firstIndex(of: UInt8(ascii: "/")) ?? beforeQuery
        guard Self.hasHost(bytes[authorityStart..<pathStart]) else {
            throw NetworkError(.invalidURL, message: "The base URL \(base) has no host.")
        }
        var text = String(absolute[..<pathStart])
        text += joinPaths(String(absolute[pathStart..<beforeQuery]), percentEncodePath(path))
        var queryParts: [String] = []
        if let existingQuery, !existingQuery.isEmpty { queryParts.append(String(existingQuery)) }
        if let query, !query.isEmpty { queryParts.append(query.map(Self.encode).joined(separator: "&")) }
        if !queryParts.isEmpty { text += "?" + queryParts.joined(separator: "&") }
        guard let url = URL(string: text) else {
            throw NetworkError(.invalidURL, message: "Could not form a URL from \(base) and \(path).")
        }
        return url
    }

    /// Whether an authority (`user@host:port`) names a host: what is left after the user info
    /// and the port is not empty. (Checked on bytes: `URL.host` costs more than building the URL.)
    static func hasHost(_ authority: Substring.UTF8View) -> Bool {
        var host = authority
        if let at = host.lastIndex(of: UInt8(ascii: "@")) { host = host[host.index(after: at)...] }
        if host.first == UInt8(ascii: "[") {  // an IPv6 literal: something between the brackets
            guard let close = host.firstIndex(of: UInt8(ascii: "]")) else { return false }
            return host.distance(from: host.startIndex, to: close) > 1
        }
        if let colon = host.firstIndex(of: UInt8(ascii: ":")) { host = host[..<colon] }
        return !host.isEmpty
    }

    static func joinPaths(_ left: String, _ right: String) -> String {
        if right.isEmpty { return left.isEmpty ? "/" : left }
        let trimmedLeft = left.hasSuffix("/") ? String(left.dropLast()) : left
        let trimmedRight = right.hasPrefix("/") ? String(right.dropFirst()) : right
        return trimmedLeft + "/" + trimmedRight
    }

    static func encode(_ item: URLQueryItem) -> String {
        let name = percentEncodeQueryComponent(item.name)
        guard let value = item.value else { return name }
        return name + "=" + percentEncodeQueryComponent(value)
    }

    /// Percent-encodes everything except RFC 3986 unreserved characters.
    package static func percentEncodeQueryComponent(_ string: String) -> String {
        PercentEncoding.queryComponent(string)
    }

    /// Percent-encodes a path: keeps unreserved characters, sub-delims, `:`, `@`, `/`, and
    /// `%XX` escapes that are already there, so a pre-encoded path is not encoded twice.
    package static func percentEncodePath(_ string: String) -> String {
        PercentEncoding.path(string)
    }
}
