import Foundation

/// A request as the loopback server received it: what a test asserts on.
public struct LoopbackRequest: Sendable, CustomStringConvertible {
    /// The method token, such as `"GET"`.
    public let method: String
    /// The request target exactly as sent, such as `"/api/models?page=2"`.
    public let target: String
    /// The path, percent-decoded, such as `"/api/model/42"`.
    public let path: String
    /// The path as sent, still percent-encoded.
    public let rawPath: String
    /// The query as sent (after `?`, still percent-encoded); `nil` when there was none.
    public let rawQuery: String?
    /// The headers in the order received, names as sent.
    public let headers: [(name: String, value: String)]
    /// The body, de-chunked; empty when there was none.
    public let body: Data
    /// The HTTP version, such as `"HTTP/1.1"`.
    public let httpVersion: String
    /// Which connection it arrived on, numbered from 1 in accept order; equal numbers mean
    /// the connection was reused.
    public let connectionID: Int
    /// Whether the body arrived with `Transfer-Encoding: chunked`.
    public let wasChunked: Bool

    /// Creates a request record (the server does this; tests rarely need to).
    public init(
        method: String, target: String, headers: [(name: String, value: String)], body: Data,
        httpVersion: String = "HTTP/1.1", connectionID: Int = 0, wasChunked: Bool = false
    ) {
        self.method = method
        self.target = target
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        self.rawPath = parts.first.map(String.init) ?? target
        self.rawQuery = parts.count > 1 ? String(parts[1]) : nil
        self.path = rawPath.removingPercentEncoding ?? rawPath
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.connectionID = connectionID
        self.wasChunked = wasChunked
    }

    /// The first value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of header `name`, compared case-insensitively.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The query as name/value pairs, percent-decoded (a `+` stays a `+`).
    public var queryItems: [URLQueryItem] {
        guard let rawQuery, !rawQuery.isEmpty else { return [] }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : nil
            return URLQueryItem(name: name, value: value)
        }
    }

    /// The decoded value of the first query item called `name`.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The token of an `Authorization: Bearer <token>` header.
    public var bearerToken: String? {
        guard let value = header("Authorization"), value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }

    /// The body as UTF-8 text.
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }

    /// The body parsed as a JSON object, or `nil`.
    public var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }

    /// `METHOD target`.
    public var description: String { "\(method) \(target)" }
}
