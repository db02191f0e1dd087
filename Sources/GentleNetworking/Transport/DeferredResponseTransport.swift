import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that can return a response's status without building its `HTTPURLResponse`.
///
/// On Linux, `HTTPURLResponse.init` canonicalizes every header name through Foundation string
/// APIs and costs more per request than anything else on the client side. When a caller only
/// needs the status and body (``HTTPNetworkService/request(to:via:)`` decoding a 2xx body), it
/// skips that work; error paths still build the full response.
protocol DeferredResponseTransport: HTTPTransportProtocol {
    /// Sends `request` like `data(for:)`, deferring the construction of the response.
    func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse)
}

/// A transport that can send header fields a request does not carry without a copy of the
/// request: on Linux, changing a `URLRequest` whose storage is shared (a decorator's argument
/// always is) copies the whole `NSMutableURLRequest`, normalizing its method again (about 7k
/// instructions, on every revalidation of ``ETagTransport``).
protocol FieldAddingTransport: DeferredResponseTransport {
    /// ``DeferredResponseTransport/deferredData(for:)`` with `fields` sent as if `request`
    /// carried them (each replacing a field of the same name that it does carry).
    func deferredData(
        for request: URLRequest, adding fields: [(String, String)]
    ) async throws -> (
        Data, DeferredResponse
    )
}

/// A response's status, its header fields, and the full `HTTPURLResponse` on demand.
struct DeferredResponse: Sendable {
    /// The HTTP status code.
    let statusCode: Int
    /// The URL the response came from (after redirects), as the built response would have it.
    let url: URL?
    private let build: @Sendable () throws -> HTTPURLResponse
    private let fields: Fields

    /// Where the header fields come from: already merged, or as received (merged when asked).
    private enum Fields: Sendable {
        case merged(@Sendable () -> [String: String])
        case received(@Sendable () -> [(String, String)])
    }

    /// - Parameters:
    ///   - fields: The header fields without building the response: names as the server spelled
    ///     them, a repeated field's values joined with ", " under its first spelling.
    ///   - build: Builds the response.
    init(
        statusCode: Int, url: URL?, fields: @escaping @Sendable () -> [String: String],
        build: @escaping @Sendable () throws -> HTTPURLResponse
    ) {
        self.statusCode = statusCode
        self.url = url
        self.fields = .merged(fields)
        self.build = build
    }

    /// - Parameters:
    ///   - receivedFields: The header fields in the order received, names as the server spelled
    ///     them, a repeated field once per line; ``headerFields()`` merges them.
    ///   - build: Builds the response.
    init(
        statusCode: Int, url: URL?, receivedFields: @escaping @Sendable () -> [(String, String)],
        build: @escaping @Sendable () throws -> HTTPURLResponse
    ) {
        self.statusCode = statusCode
        self.url = url
        self.fields = .received(receivedFields)
        self.build = build
    }

    /// A response already built.
    init(_ response: HTTPURLResponse) {
        self.init(statusCode: response.statusCode, url: response.url, fields: { response.stringHeaders }) { response }
    }

    /// Builds the `HTTPURLResponse` (a transport may hand out one it built before for the same
    /// URL and head: responses are immutable).
    func response() throws -> HTTPURLResponse {
        try build()
    }

    /// The header fields, without building the response (see `init`'s `fields`). Each call works
    /// them out again.
    func headerFields() -> [String: String] {
        switch fields {
        case .merged(let fields): fields()
        case .received(let fields): Self.merged(fields())
        }
    }

    /// The header fields as a list, without merging them when they were kept as received: a
    /// repeated name may appear more than once (in any case), and a name may be empty. Cheaper
    /// than ``headerFields()`` for a caller that walks them once.
    func fieldList() -> [(String, String)] {
        switch fields {
        case .merged(let fields): fields().map { ($0.key, $0.value) }
        case .received(let fields): fields()
        }
    }

    /// Header fields in the order received merged into a dictionary as `HTTPURLResponse` merges
    /// them: a repeated name (ASCII case-insensitively) keeps its first spelling, and its values
    /// are joined with ", ". A field without a name (a line such as `: x`) is dropped.
    static func merged(_ fields: [(String, String)]) -> [String: String] {
        var merged: [String: String] = Dictionary(minimumCapacity: fields.count)
        forEachMerged(fields) { name, value in merged[name] = value }
        return merged
    }

    /// Calls `body` once per distinct name of `fields` (ASCII case-insensitively), in the order
    /// of first appearance, with the name's first spelling and its values joined with ", " in
    /// the order received; a field without a name is skipped. What ``merged(_:)`` and a 304's
    /// renewal (`ETagTransport.revalidate(_:withFields:)`) both walk.
    static func forEachMerged(_ fields: [(String, String)], _ body: (String, String) -> Void) {
        // A usual head (a dozen fields or so) repeats no name: found by comparing each name with
        // those before it, byte-wise, instead of hashing a lowercased copy of every name, and
        // then passed on as it is. A long one (a hostile server's, up to the header-count
        // limit) is merged in linear time.
        guard fields.count <= 32 else { return forEachMergedHashing(fields, body) }
        let repeats = fields.indices.contains { index in
            let name = fields[index].0
            return !name.isEmpty && fields[..<index].contains { $0.0.equalsIgnoringASCIICase(name) }
        }
        guard repeats else {
            for (name, value) in fields where !name.isEmpty { body(name, value) }
            return
        }
        var merged: [(String, String)] = []
        merged.reserveCapacity(fields.count)
        for (name, value) in fields where !name.isEmpty {
            if let first = merged.firstIndex(where: { $0.0.equalsIgnoringASCIICase(name) }) {
                merged[first].1 += ", " + value
            } else {
                merged.append((name, value))
            }
        }
        for (name, value) in merged { body(name, value) }
    }

    /// ``forEachMerged(_:_:)`` with a dictionary of names with ASCII letters lowercased (only
    /// those: `lowercased()` would also fold non-ASCII letters, which the byte-wise walk keeps
    /// apart) to find repeats.
    static func forEachMergedHashing(_ fields: [(String, String)], _ body: (String, String) -> Void) {
        var merged: [(String, String)] = []
        var position: [String: Int] = Dictionary(minimumCapacity: fields.count)  // folded → index in merged
        for (name, value) in fields where !name.isEmpty {
            let key = String(decoding: name.utf8.map { $0 &- 65 < 26 ? $0 | 0x20 : $0 }, as: UTF8.self)
            if let index = position[key] {
                merged[index].1 += ", " + value
            } else {
                position[key] = merged.count
                merged.append((name, value))
            }
        }
        for (name, value) in merged { body(name, value) }
    }

    /// ``merged(_:)`` by way of ``forEachMergedHashing(_:_:)`` at any length (for tests).
    static func mergedHashing(_ fields: [(String, String)]) -> [String: String] {
        var merged: [String: String] = Dictionary(minimumCapacity: fields.count)
        forEachMergedHashing(fields) { name, value in merged[name] = value }
        return merged
    }
}

/// What a decorator needs of a response to decide (its status) and, when it must look closer,
/// the full `HTTPURLResponse`: so one implementation serves `data(for:)` (a built response)
/// and `deferredData(for:)` (a ``DeferredResponse``, built only on that closer look).
protocol ExchangeResponse {
    /// The HTTP status code.
    var statusCode: Int { get }
    /// The full response (built on demand for a deferred one).
    func httpResponse() throws -> HTTPURLResponse
}

extension HTTPURLResponse: ExchangeResponse {
    func httpResponse() -> HTTPURLResponse { self }
}

extension DeferredResponse: ExchangeResponse {
    func httpResponse() throws -> HTTPURLResponse { try response() }
}

extension URLRequest {
    /// A copy with `fields` set, each replacing a field of the same name (in any case), in one
    /// assignment of the header fields (`setValue` costs more per field on Linux).
    func adding(_ fields: [(String, String)]) -> URLRequest {
        var copy = self
        var all = copy.allHTTPHeaderFields ?? [:]
        for (name, value) in fields {
            for existing in all.keys where existing.equalsIgnoringASCIICase(name) { all[existing] = nil }
            all[name] = value
        }
        copy.allHTTPHeaderFields = all
        return copy
    }
}
