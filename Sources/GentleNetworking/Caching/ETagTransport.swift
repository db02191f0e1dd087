import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Conditional GETs: remembers `ETag`s and bodies, sends `If-None-Match`, and turns a
/// `304 Not Modified` back into the cached 2xx response.
///
/// ```swift
/// let service = HTTPNetworkService(
///     transport: ETagTransport(inner: URLSessionTransport(session: .shared))
/// )
/// ```
///
/// - Only GET requests are touched, and only those without an `If-None-Match` of their own.
/// - A 2xx with an `ETag` is stored, unless it says `Cache-Control: no-store` or varies on a
///   header other than `Accept`, `Accept-Encoding` or `Authorization`. A 2xx without an ETag
///   drops any stored entry.
/// - The cache key is the method, the URL, the `Accept` value and a SHA-256 of the
///   `Authorization` value: one user's body is never served to another, and raw tokens are
///   never stored.
/// - On a 304, the cached body is returned with the cached status and the cached headers
///   updated by the 304's. A 304 with no entry is ``NetworkError`` of kind
///   ``NetworkError/Kind/unexpectedNotModified``, never an empty success.
public struct ETagTransport: HTTPTransportProtocol {
    /// The transport requests go through.
    public let inner: any HTTPTransportProtocol
    /// Where entries are kept.
    public let store: any ETagStoreProtocol

    /// Creates a caching transport.
    ///
    /// - Parameters:
    ///   - inner: The platform's default transport by default.
    ///   - store: A new ``InMemoryETagStore`` (100 entries, 10 MiB) by default.
    public init(
        inner: any HTTPTransportProtocol = DefaultTransport.make(),
        store: any ETagStoreProtocol = InMemoryETagStore()
    ) {
        self.inner = inner
        self.store = store
    }

    /// The headers a response may vary on and still be stored (they are part of the key, or
    /// handled by the transport below).
    public static let storableVaryHeaders: Set<String> = ["accept", "accept-encoding", "authorization"]

    /// The key an entry for `request` is stored under.
    public static func cacheKey(for request: URLRequest) -> String {
        let method = (request.httpMethod ?? "GET").uppercased()
        let url = request.url?.absoluteString ?? ""
        let accept = request.value(forHTTPHeaderField: "Accept") ?? ""
        let identity =
            request.value(forHTTPHeaderField: "Authorization").map { "auth:" + SHA256Digest.hexHash($0) } ?? "anonymous"
        return "\(method) \(url) accept:\(accept) \(identity)"
    }

    /// Sends `request`, conditionally when an entry exists.
    ///
    /// - Throws: ``NetworkError`` of kind ``NetworkError/Kind/unexpectedNotModified`` for a 304
    ///   with no entry; otherwise what the inner transport throws.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard (request.httpMethod ?? "GET").uppercased() == "GET",
            request.value(forHTTPHeaderField: "If-None-Match") == nil
        else {
            return try await inner.data(for: request)
        }
        let key = Self.cacheKey(for: request)
        let cached = await store.cachedResponse(for: key)
        var conditional = request
        if let cached {
            conditional.setValue(cached.etag, forHTTPHeaderField: "If-None-Match")
        }
        let (data, response) = try await inner.data(for: conditional)

        if response.statusCode == 304 {
            guard let cached else {
                throw NetworkError(
                    .unexpectedNotModified,
                    message: "304 Not Modified for a request that had no cached entry to revalidate.",
                    url: response.url ?? request.url, response: HTTPErrorResponse(response, body: data))
            }
            let revalidated = Self.revalidate(cached, with: response)
            await store.store(revalidated, for: key)
            guard
                let rebuilt = HTTPURLResponse(
                    url: response.url ?? request.url ?? cached.url ?? URL(fileURLWithPath: "/"),
                    statusCode: revalidated.statusCode, httpVersion: "HTTP/1.1", headerFields: revalidated.headers)
            else {
                throw TransportError(.badResponse, url: request.url, message: "Could not rebuild the cached response.")
            }
            return (revalidated.body, rebuilt)
        }

        if (200..<300).contains(response.statusCode) {
            // Converting all headers is costly on Linux; only do it when there is an ETag.
            guard response.value(forHTTPHeaderField: "ETag") != nil else {
                if cached != nil { await store.remove(for: key) }
                return (data, response)
            }
            let headers = HTTPErrorResponse(response, body: Data()).headers
            if let etag = Self.header("ETag", in: headers), Self.isStorable(headers) {
                await store.store(
                    CachedResponse(
                        body: data, statusCode: response.statusCode, headers: headers, url: response.url ?? request.url,
                        etag: etag, storedAt: Date()),
                    for: key)
            } else if cached != nil {
                await store.remove(for: key)
            }
        }
        return (data, response)
    }

    /// Whether a response with `headers` may be stored.
    public static func isStorable(_ headers: [String: String]) -> Bool {
        if let cacheControl = header("Cache-Control", in: headers)?.lowercased(),
            cacheControl.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "no-store" }
            )
        {
            return false
        }
        if let vary = header("Vary", in: headers) {
            let fields = vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            return fields.allSatisfy { storableVaryHeaders.contains($0) }
        }
        return true
    }

    /// The cached entry with its headers updated by a 304 (RFC 9111 §4.3.4), except the framing
    /// headers that describe the 304 itself.
    static func revalidate(_ cached: CachedResponse, with notModified: HTTPURLResponse) -> CachedResponse {
        var updated = cached
        let excluded: Set<String> = ["content-length", "transfer-encoding", "content-encoding", "connection"]
        for (name, value) in HTTPErrorResponse(notModified, body: Data()).headers
        where !excluded.contains(name.lowercased()) {
            if let existing = updated.headers.keys.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
                updated.headers[existing] = nil
            }
            updated.headers[name] = value
        }
        if let etag = header("ETag", in: updated.headers) { updated.etag = etag }
        updated.storedAt = Date()
        return updated
    }

    static func header(_ name: String, in headers: [String: String]) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
