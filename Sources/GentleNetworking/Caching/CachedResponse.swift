import Foundation

/// A stored 2xx response that carried an `ETag`: what an ``ETagStoreProtocol`` keeps.
public struct CachedResponse: Sendable, Hashable, Codable {
    /// The body.
    public var body: Data
    /// The status of the stored response, such as 200.
    public var statusCode: Int
    /// The response headers (updated by later 304s).
    public var headers: [String: String]
    /// The URL the response came from.
    public var url: URL?
    /// The entity tag, sent back as `If-None-Match`.
    public var etag: String
    /// When it was stored or last revalidated.
    public var storedAt: Date

    /// Creates an entry.
    public init(body: Data, statusCode: Int, headers: [String: String], url: URL?, etag: String, storedAt: Date) {
        self.body = body
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
        self.etag = etag
        self.storedAt = storedAt
    }

    /// The size the entry counts for in byte-bounded stores: the body, the headers, the URL and
    /// the tag, plus 64 bytes. (The URL, which a redirect's `Location` chooses, was not counted:
    /// entries of long URLs went past a store's byte limit.)
    public var approximateSize: Int {
        body.count + headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
            + (url?.absoluteString.utf8.count ?? 0) + etag.utf8.count + 64
    }
}

// MARK: The original GentleNetworking's ETagCacheEntry

/// The original GentleNetworking's name for a stored response: a custom ``ETagStoreProtocol``
/// written to its signatures (`cachedResponse(for:) -> ETagCacheEntry?`,
/// `store(_ entry: ETagCacheEntry, for:)`) conforms unchanged.
public typealias ETagCacheEntry = CachedResponse

extension CachedResponse {
    /// Creates an entry from a response, as the original's `ETagCacheEntry(etag:data:response:)`.
    ///
    /// Keeps the response's status, URL and headers, except the fields that may carry a
    /// credential (`Set-Cookie`, `Authorization`, and the other names log records hide), which
    /// ``ETagTransport`` never stores either: a store may write its entries to disk. `storedAt`
    /// is now.
    public init(etag: String, data: Data, response: HTTPURLResponse) {
        self.init(
            body: data, statusCode: response.statusCode,
            headers: ETagTransport.storedHeaders(response.stringHeaders), url: response.url, etag: etag,
            storedAt: Date())
    }

    /// The body, under the original's name (``body``).
    public var data: Data { body }

    // swift-format-ignore: NeverUseImplicitlyUnwrappedOptionals
    /// The stored status, headers and URL as an `HTTPURLResponse`, as the original's entry held
    /// it. Built on each read. An entry without a URL (one made by hand with `url: nil`) answers
    /// for `file:///`, as ``ETagTransport`` does when it rebuilds such an entry.
    ///
    /// Implicitly unwrapped so that the original's `entry.response.statusCode` compiles unchanged:
    /// Foundation's initializer is failable (no platform documents when it fails; neither fails
    /// for a stored entry), and a `nil` here is better than a trap inside the library.
    public var response: HTTPURLResponse! {
        HTTPURLResponse(
            url: url ?? URL(fileURLWithPath: "/"), statusCode: statusCode, httpVersion: "HTTP/1.1",
            headerFields: headers)
    }
}
