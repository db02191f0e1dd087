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
        let body = endpoint.body
        var request = URLRequest(url: url)
        // GET is URLRequest's default; setting it anyway costs a copy and a check on Linux.
        if endpoint.method != .get { request.httpMethod = endpoint.method.rawValue }
        if let timeout = endpoint.timeoutInterval.flatMap(Clamp.timeout) {
            request.timeoutInterval = timeout
        }
        if let body {
            do {
                request.httpBody = try jsonEncoder.encode(body)
            } catch {
                throw NetworkError(
                    .encodingFailed,
                    message:
                        "The body of \(endpoint.method.rawValue) \(PrintableText.escaping(endpoint.path)) could not be encoded.",
                    url: url,
                    underlyingError: error
                )
            }
        }
        // One assignment of constant fields instead of `setValue`, which on Linux canonicalizes
        // the name and checks the value character by character: ~10k instructions per request,
        // about 5% of a whole small request. The result is the same request.
        request.allHTTPHeaderFields = body == nil ? Self.jsonAccept : Self.jsonAcceptAndContentType
        // Sorted for a stable order; most endpoints have no headers of their own, and sorting an
        // empty dictionary still allocates.
        let headers = endpoint.headers
        do throws(TransportError) {
            try RequestValidator.checkFieldsSize(headers, url: url)
            for (name, value) in headers.isEmpty ? [] : headers.sorted(by: { $0.key < $1.key }) {
                try RequestValidator.setHeader(value, named: name, on: &request)
            }
        } catch {
            throw NetworkError(.invalidRequest, message: error.message, url: url, underlyingError: error)
        }
        return request
    }

    private static let jsonAccept = ["Accept": "application/json"]
    private static let jsonAcceptAndContentType = ["Accept": "application/json", "Content-Type": "application/json"]

    /// Joins `path` to `base` with exactly one `/` and appends strictly encoded query items.
    static func url(base: URL, path: String, query: [URLQueryItem]?) throws(NetworkError) -> URL {
        // Built as text from the base's (already percent-encoded) absolute string: a URLComponents
        // round trip costs several times more per request on Linux. The base is scanned once, as
        // contiguous UTF-8 bytes: String index walks cost more here than the rest of the function.
        var absolute = base.absoluteString
        let scanned = absolute.withUTF8 { bytes -> (prefix: String, basePath: String, query: String, hasHost: Bool)? in
            guard let layout = BaseLayout(scanning: bytes) else { return nil }
            func text(_ range: Range<Int>) -> String {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            }
            return (
                text(0..<layout.pathStart), text(layout.pathStart..<layout.beforeQuery),
                layout.queryStart.map { text($0..<layout.end) } ?? "", layout.hasHost(in: bytes)
            )
        }
        guard let scanned else {
            throw NetworkError(.invalidURL, message: "The base URL \(Redactor.url(base)) is not an absolute URL.")
        }
        guard scanned.hasHost else {
            throw NetworkError(.invalidURL, message: "The base URL \(Redactor.url(base)) has no host.")
        }
        let encodedPath = percentEncodePath(path)
        if let segment = PercentEncoding.dotSegment(in: encodedPath) {
            throw NetworkError(
                .invalidURL,
                message: "The endpoint path has a \"\(segment)\" segment: the server would resolve it and the "
                    + "request could leave the base path (a value such as ../../other-tenant put into a path).")
        }
        var text = scanned.prefix
        text += joinPaths(scanned.basePath, encodedPath)
        var queryParts: [String] = []
        if !scanned.query.isEmpty { queryParts.append(scanned.query) }
        if let query, !query.isEmpty { queryParts.append(query.map(Self.encode).joined(separator: "&")) }
        if !queryParts.isEmpty { text += "?" + queryParts.joined(separator: "&") }
        guard let url = URL(string: text) else {
            throw NetworkError(
                .invalidURL,
                message: "Could not form a URL from \(Redactor.url(base)) and \(PrintableText.escaping(path)).")
        }
        return url
    }

    /// Where the parts of an absolute URL's text are, as byte offsets: `scheme://authority`,
    /// then the path up to `?`, the query up to `#`, and the fragment.
    struct BaseLayout {
        /// Just after `://`.
        let authorityStart: Int
        /// The first `/` after the authority, or `beforeQuery`.
        let pathStart: Int
        /// The `?` that starts the query, or `end`.
        let beforeQuery: Int
        /// Just after the `?`, when there is one.
        let queryStart: Int?
        /// The `#` that starts the fragment, or the end of the text.
        let end: Int

        /// `nil` when the text has no `scheme://` before its query.
        init?(scanning bytes: UnsafeBufferPointer<UInt8>) {
            var end = bytes.count
            var beforeQuery: Int?
            var colon: Int?
            for index in 0..<bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "#") {
                    end = index
                    break
                }
                if byte == UInt8(ascii: "?"), beforeQuery == nil { beforeQuery = index }
                if byte == UInt8(ascii: ":"), colon == nil, beforeQuery == nil { colon = index }
            }
            let queryMark = beforeQuery ?? end
            guard let colon, colon + 3 <= queryMark, bytes[colon + 1] == UInt8(ascii: "/"),
                bytes[colon + 2] == UInt8(ascii: "/")
            else { return nil }
            var pathStart = queryMark
            for index in (colon + 3)..<queryMark where bytes[index] == UInt8(ascii: "/") {
                pathStart = index
                break
            }
            self.authorityStart = colon + 3
            self.pathStart = pathStart
            self.beforeQuery = queryMark
            self.queryStart = beforeQuery.map { $0 + 1 }
            self.end = end
        }

        /// Whether the authority names a host.
        func hasHost(in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            EndpointRequestBuilder.hasHost(bytes, authority: authorityStart..<pathStart)
        }
    }

    /// Whether an authority (`user@host:port`) names a host: what is left after the user info
    /// and the port is not empty. (Checked on bytes: `URL.host` costs more than building the URL.)
    static func hasHost(_ bytes: UnsafeBufferPointer<UInt8>, authority: Range<Int>) -> Bool {
        var start = authority.lowerBound
        var end = authority.upperBound
        var index = end
        while index > start {  // the host starts after the last "@"
            index -= 1
            if bytes[index] == UInt8(ascii: "@") {
                start = index + 1
                break
            }
        }
        if start < end, bytes[start] == UInt8(ascii: "[") {  // an IPv6 literal: something between the brackets
            guard let close = (start..<end).first(where: { bytes[$0] == UInt8(ascii: "]") }) else { return false }
            return close - start > 1
        }
        if let colon = (start..<end).first(where: { bytes[$0] == UInt8(ascii: ":") }) { end = colon }
        return end > start
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
