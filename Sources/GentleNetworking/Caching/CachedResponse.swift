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
