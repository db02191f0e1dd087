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
/// - A 2xx with an `ETag` is stored, unless it or its request says `Cache-Control: no-store`
///   (an entry the request was made with is then dropped), or it varies on a
///   header that is not part of the key (``storableVaryHeaders-property``). A response that varies on
///   `Cookie` is stored only when the request carried its own `Cookie` header: cookies that a
///   session adds from its cookie storage, below this transport, are invisible here. A 2xx
///   without an ETag drops any stored entry.
/// - The cache key is the method, the URL, the `Accept` value and a SHA-256 over every
///   credential the request carries: `Authorization`, `Proxy-Authorization`, `Cookie` and the
///   headers in ``credentialHeaders`` (such as `X-Api-Key`), and any header named like a
///   credential (`PRIVATE-TOKEN`, `X-Auth-Key`, as the redactor names them). One identity's body is never served
///   to another, and raw credentials are never stored. Nor are cookies the server sets:
///   `Set-Cookie` is left out of the stored headers.
/// - On a 304, the cached body is returned with the cached status and the cached headers
///   updated by the 304's. A 304 whose `ETag` names another representation than the entry's
///   (RFC 9111 §4.3.4 forbids using it) drops the entry, and the request is sent once more
///   without a condition. A 304 with no entry is ``TransportError``
///   ``TransportError/Code/unexpectedNotModified`` (``NetworkError/Kind/unexpectedNotModified``
///   through ``HTTPNetworkService``), never an empty success.
public struct ETagTransport: HTTPTransportProtocol {
    /// The transport requests go through.
    public var inner: any HTTPTransportProtocol { innerExchange.transport }
    /// The inner transport, with what it can do looked up once (it holds `inner`).
    let innerExchange: InnerTransport
    /// Where entries are kept.
    public let store: any ETagStoreProtocol

    /// `store` when it is the in-memory store: read and renewed without an actor hop.
    private let memoryStore: InMemoryETagStore?

    /// Whether `store` is a ``DiskETagStore``, whose read of an entry marks it recently used:
    /// a 304 that renews nothing but the entry's `Date` does not write it again (a 20 MB entry
    /// polled every few seconds was rewritten and synced to disk on each 304).
    private let storeTouchesOnRead: Bool

    /// The request headers whose values identify the caller, lowercased: each one the request
    /// carries is hashed into the cache key. Always holds ``alwaysKeyedCredentialHeaders``.
    public let credentialHeaders: Set<String>

    /// Creates a caching transport.
    ///
    /// - Parameters:
    ///   - inner: The platform's default transport by default.
    ///   - store: A new ``InMemoryETagStore`` (100 entries, 10 MiB) by default.
    ///   - credentialHeaders: The headers that carry credentials besides `Authorization`,
    ///     `Proxy-Authorization` and `Cookie` (which are always part of the key);
    ///     ``defaultCredentialHeaders`` by default. Names are compared case-insensitively. Add the
    ///     `headerField` of any auth service that uses a custom header.
    public init(
        inner: any HTTPTransportProtocol = DefaultTransport.make(),
        store: any ETagStoreProtocol = InMemoryETagStore(),
        credentialHeaders: Set<String> = ETagTransport.defaultCredentialHeaders
    ) {
        self.innerExchange = InnerTransport(inner)
        self.store = store
        self.memoryStore = store as? InMemoryETagStore
        self.storeTouchesOnRead = store is DiskETagStore
        self.credentialHeaders = Self.normalized(credentialHeaders)
        self.varyAllowed = Self.varyHeaders(keying: self.credentialHeaders)
    }

    /// `authorization`, `proxy-authorization` and `cookie`: part of every key, whatever
    /// `credentialHeaders` an instance is given.
    public static let alwaysKeyedCredentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The credential headers keyed by default: ``alwaysKeyedCredentialHeaders`` plus common API-key
    /// and token headers (`x-api-key`, `api-key`, `apikey`, `x-auth-token`, `x-access-token`,
    /// `x-session-token`, `x-amz-security-token`, `x-goog-api-key`).
    public static let defaultCredentialHeaders: Set<String> = alwaysKeyedCredentialHeaders.union(
        Origin.credentialHeaders.map { $0.lowercased() })

    /// The headers a response may vary on and still be stored with the default configuration:
    /// `accept`, `accept-encoding` and ``defaultCredentialHeaders`` (they are part of the key, or
    /// handled by the transport below). `cookie` only counts when the request carried a `Cookie`.
    public static let storableVaryHeaders: Set<String> = varyHeaders(keying: defaultCredentialHeaders)

    /// The headers a response may vary on and still be stored by this transport: `accept`,
    /// `accept-encoding` and ``credentialHeaders``.
    public var storableVaryHeaders: Set<String> { varyAllowed }
    /// `storableVaryHeaders`, worked out once (it was worked out for every stored response).
    private let varyAllowed: Set<String>

    /// The key an entry for `request` is stored under with ``defaultCredentialHeaders``.
    public static func cacheKey(for request: URLRequest) -> String {
        cacheKey(for: request, normalizedCredentialHeaders: normalizedDefaults)
    }

    private static let normalizedDefaults = normalized(defaultCredentialHeaders)

    /// The key an entry for `request` is stored under by this transport (with its
    /// ``credentialHeaders``).
    public func cacheKey(for request: URLRequest) -> String {
        Self.cacheKey(for: request, normalizedCredentialHeaders: keyedInForce)
    }

    /// ``credentialHeaders`` (normalized at init), with the headers the calling task's stack
    /// names as credentials (so ``cacheKey(for:)`` called outside the stack, where none are
    /// named, gives another key for a request that carries one of them) (``Origin/withCredentialHeaders(_:isolation:operation:)``: the auth
    /// service's own `headerField`, Y-Network's session headers). Without them, two users whose
    /// token goes in `X-User-Token` shared one entry, and the second got the first's body on a
    /// 304.
    private var keyedInForce: Set<String> {
        let additional = Origin.additionalCredentialHeaders
        guard !additional.isEmpty else { return credentialHeaders }
        return credentialHeaders.union(Self.normalized(Set(additional)))
    }

    /// The key an entry for `request` is stored under when `credentialHeaders` (plus
    /// ``alwaysKeyedCredentialHeaders``) identify the caller.
    ///
    /// The credentials are hashed with SHA-256, never kept raw, in name order, so the key does
    /// not depend on header order or case. A request whose only credential is `Authorization`
    /// keeps the key format of earlier versions, so stored entries stay valid.
    public static func cacheKey(for request: URLRequest, credentialHeaders: Set<String>) -> String {
        cacheKey(for: request, normalizedCredentialHeaders: normalized(credentialHeaders))
    }

    /// ``cacheKey(for:credentialHeaders:)`` with the names already lowercased and trimmed.
    static func cacheKey(for request: URLRequest, normalizedCredentialHeaders keyed: Set<String>) -> String {
        var method = request.httpMethod ?? "GET"
        if method != "GET" { method = method.uppercased() }
        return key(method: method, request: request, keyed: keyed).key
    }

    /// The key a GET that this transport may make conditional is stored under; nil for any other
    /// method, or when the caller set a precondition (`If-None-Match`, `If-Modified-Since`,
    /// `If-Match`, `If-Unmodified-Since`), `Range` or `If-Range` itself (the exchange is theirs: a
    /// 304 or 412 answers their condition, and a range's 206 is part of a representation, never
    /// one to serve whole, and a whole one must not answer a range).
    func revalidationKey(for request: URLRequest) -> String? {
        revalidation(for: request)?.key
    }

    /// ``revalidationKey(for:)``, and whether the request's own `Cache-Control` says `no-store`
    /// (read in the same pass over its headers): then a 304 answers it from the entry but does
    /// not renew the entry, as a 2xx to it drops the entry.
    private func revalidation(for request: URLRequest) -> (key: String, forbidsStoring: Bool)? {
        let method = request.httpMethod ?? "GET"
        guard method == "GET" || method.equalsIgnoringASCIICase("GET") else { return nil }
        let (key, conditional, forbidsStoring) = Self.key(method: "GET", request: request, keyed: keyedInForce)
        return conditional ? nil : (key, forbidsStoring)
    }

    /// The key for `method` and `request`, and whether the request carries a precondition,
    /// `Range` or `If-Range` (an exchange this transport leaves alone). One
    /// pass over the request's headers, comparing names byte-wise (a `lowercased()` copy and a
    /// hash per header, or a case-insensitive lookup per credential name, cost more: this runs
    /// for every GET).
    private static func key(
        method: String, request: URLRequest, keyed: Set<String>
    ) -> (key: String, conditional: Bool, forbidsStoring: Bool) {
        let url = request.url?.absoluteString ?? ""
        var accept = ""
        var conditional = false
        var forbidsStoring = false
        var credentials: [(name: String, value: String)] = []
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            if name.equalsIgnoringASCIICase("accept") {
                accept = value
            } else if name.equalsIgnoringASCIICase("cache-control") {
                // A byte scan first: `saysNoStore` splits and trims (Foundation, ~11k instructions).
                forbidsStoring = mentionsNoStore(value) && saysNoStore(value)
            } else if name.equalsIgnoringASCIICase("if-none-match") || name.equalsIgnoringASCIICase("range")
                || name.equalsIgnoringASCIICase("if-range") || name.equalsIgnoringASCIICase("if-modified-since")
                || name.equalsIgnoringASCIICase("if-match") || name.equalsIgnoringASCIICase("if-unmodified-since")
            {
                conditional = true
            } else if let keyedName = keyed.contains(name)
                ? name : keyed.first(where: { $0.equalsIgnoringASCIICase(name) })
            {
                credentials.append((keyedName, value))
            } else if Origin.isCredentialHeader(name, listed: []) {
                // Named like a credential on no list (`PRIVATE-TOKEN`, `X-Auth-Key`): two
                // identities shared one entry, and a 304 answered before the server checked it
                // served one's body to the other.
                credentials.append((name.lowercased(), value))
            }
        }
        let identity: String
        if credentials.isEmpty {
            identity = "anonymous"
        } else if credentials.count == 1, credentials[0].name == "authorization" {
            identity = "auth:" + SHA256Digest.hexHash(credentials[0].value)
        } else {
            credentials.sort { $0.name < $1.name }
            // Length-prefixed, so no choice of values can make two different sets hash alike.
            var canonical = ""
            for (name, value) in credentials {
                canonical += "\(name.utf8.count):\(name)\(value.utf8.count):\(value);"
            }
            identity = "credentials:" + SHA256Digest.hexHash(canonical)
        }
        return (
            String(concatenating: [method, " ", url, " accept:", accept, " ", identity]), conditional, forbidsStoring
        )
    }

    private static func normalized(_ names: Set<String>) -> Set<String> {
        Set(names.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
            .union(alwaysKeyedCredentialHeaders)
    }

    private static func varyHeaders(keying credentials: Set<String>) -> Set<String> {
        normalized(credentials).union(["accept", "accept-encoding"])
    }

    /// Streams `request` through the inner transport, uncached: a stream is neither stored nor
    /// revalidated, and no `If-None-Match` is added.
    public func stream(for request: URLRequest) async throws -> (HTTPByteStream, HTTPURLResponse) {
        try await inner.stream(for: request)
    }

    /// Sends `request`, conditionally when an entry exists.
    ///
    /// - Throws: ``TransportError`` ``TransportError/Code/unexpectedNotModified`` for a 304 with
    ///   no entry; otherwise what the inner transport throws.
    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await data(for: request, mayRefetch: true)
    }

    /// ``data(for:)``; `mayRefetch`: a 304 naming another representation than the entry's
    /// drops the entry and sends the request once more, unconditionally (only once).
    private func data(for request: URLRequest, mayRefetch: Bool) async throws -> (Data, HTTPURLResponse) {
        guard let (key, forbidsStoring) = revalidation(for: request) else {
            return try await inner.data(for: request)
        }
        // A body stream can be read once, and a 304 naming another representation sends the
        // request again: read into memory first, as the retrying decorators do. (Every
        // transport of this package refuses a GET with a body; another one may send it.)
        if mayRefetch, request.httpBodyStream != nil {
            return try await data(for: RequestBodyStream.reading(request), mayRefetch: true)
        }
        let cached = await entry(for: key)
        var conditional = request
        if let cached, Self.addIfNoneMatch(cached.etag, to: &conditional) {
            ExchangeRecorder.note(.revalidating)
        }
        let (data, response) = try await inner.data(for: conditional)

        if response.statusCode == 304 {
            let notModified = HTTPErrorResponse(response, body: data)
            let fields = notModified.headers.map { ($0.key, $0.value) }
            if mayRefetch, let cached, Self.namesAnotherRepresentation(fields, than: cached) {
                await removeEntry(for: key)
                return try await self.data(for: request, mayRefetch: false)
            }
            let revalidated = try await renew(
                cached, key: key, request: request, forbidsStoring: forbidsStoring, url: response.url ?? request.url,
                fields: fields, notModified: notModified)
            guard
                let rebuilt = HTTPURLResponse(
                    url: response.url ?? request.url ?? revalidated.url ?? URL(fileURLWithPath: "/"),
                    statusCode: revalidated.statusCode, httpVersion: "HTTP/1.1", headerFields: revalidated.headers)
            else {
                throw TransportError(.badResponse, url: request.url, message: "Could not rebuild the cached response.")
            }
            return (revalidated.body, rebuilt)
        }

        if (200..<300).contains(response.statusCode) {
            // Converting all headers is costly on Linux; only do it when there is an ETag.
            guard response.value(forHTTPHeaderField: "ETag") != nil else {
                if cached != nil { await removeEntry(for: key) }
                return (data, response)
            }
            await update(
                key, after: response.statusCode, headers: HTTPErrorResponse(response, body: Data()).headers,
                body: data, url: response.url ?? request.url, request: request, hadEntry: cached != nil)
        }
        return (data, response)
    }

    /// `data(for:)` without building `HTTPURLResponse`s the caller may never read: a 2xx, or a
    /// 304 answered from the entry (its response is built only if asked for), stays unbuilt;
    /// a 2xx's `ETag` and caching headers are read from the deferred response's fields (parsed,
    /// not built). An entry stored here keeps header names as the server spelled them (a built
    /// `HTTPURLResponse` canonicalizes them on Linux).
    func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse) {
        try await deferredData(for: request, mayRefetch: true)
    }

    /// ``deferredData(for:)``; `mayRefetch` as for ``data(for:mayRefetch:)``.
    private func deferredData(for request: URLRequest, mayRefetch: Bool) async throws -> (Data, DeferredResponse) {
        guard let (key, forbidsStoring) = revalidation(for: request) else {
            return try await innerExchange.deferredExchange(request)
        }
        if mayRefetch, request.httpBodyStream != nil {
            return try await deferredData(for: RequestBodyStream.reading(request), mayRefetch: true)
        }
        let cached = await entry(for: key)
        var condition: [(String, String)] = []
        // An ETag with CR, LF or NUL, or longer than ``maxETagBytes`` (from an entry stored
        // before such ETags were refused) is left out: it could never be sent, or would be
        // refused for good.
        if let cached, cached.etag.utf8.count <= Self.maxETagBytes, RequestValidator.isValidHeaderValue(cached.etag) {
            condition = [("If-None-Match", cached.etag)]
            ExchangeRecorder.note(.revalidating)
        }
        // Passed down beside the request, not set on a copy of it (see FieldAddingTransport).
        let (data, response) = try await innerExchange.deferredExchange(request, adding: condition)

        if response.statusCode == 304 {
            let fields = response.fieldList()
            if mayRefetch, let cached, Self.namesAnotherRepresentation(fields, than: cached) {
                await removeEntry(for: key)
                return try await deferredData(for: request, mayRefetch: false)
            }
            let revalidated = try await renew(
                cached, key: key, request: request, forbidsStoring: forbidsStoring, url: response.url ?? request.url,
                fields: fields,
                notModified: HTTPErrorResponse(
                    statusCode: 304, headers: response.headerFields(), body: data, url: response.url))
            let url = response.url ?? request.url ?? revalidated.url ?? URL(fileURLWithPath: "/")
            // The closures keep the status and headers only: a log record may keep this response
            // for long, and must not keep the cached body with it.
            let status = revalidated.statusCode
            let headers = revalidated.headers
            return (
                revalidated.body,
                DeferredResponse(statusCode: status, url: url, fields: { headers }) {
                    guard
                        let rebuilt = HTTPURLResponse(
                            url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
                    else {
                        throw TransportError(.badResponse, url: url, message: "Could not rebuild the cached response.")
                    }
                    return rebuilt
                }
            )
        }

        if (200..<300).contains(response.statusCode) {
            await update(
                key, after: response.statusCode, headers: response.headerFields(),
                body: data, url: response.url ?? request.url, request: request, hadEntry: cached != nil)
        }
        return (data, response)
    }

    /// The entry under `key` (see ``memoryStore``).
    private func entry(for key: String) async -> CachedResponse? {
        if let memoryStore { return memoryStore.entry(for: key) }
        return await store.cachedResponse(for: key)
    }

    /// Stores `response` under `key` (see ``memoryStore``).
    private func storeEntry(_ response: CachedResponse, for key: String) async {
        if let memoryStore { return memoryStore.put(response, for: key) }
        await store.store(response, for: key)
    }

    /// Removes the entry under `key` (see ``memoryStore``).
    private func removeEntry(for key: String) async {
        if let memoryStore { return memoryStore.drop(for: key) }
        await store.remove(for: key)
    }

    /// A 304 for the entry under `key`: stores and returns the entry renewed with the 304's
    /// header `fields` (see ``revalidate(_:withFields:)``). Both paths (`data(for:)` and
    /// `deferredData(for:)`) share it.
    ///
    /// An entry the 304 makes unstorable (its `Cache-Control` says `no-store`, or its `Vary`
    /// names a header the key does not hold) answers this request, and the entry is dropped, as
    /// a 2xx that may not be stored drops it: storing it renewed kept a response the server had
    /// just said not to keep. Only a 304 carrying `Cache-Control` or `Vary` is checked (the
    /// entry was storable when stored; each revalidation would otherwise pay for the check).
    ///
    /// - Throws: ``TransportError/Code/unexpectedNotModified`` (carrying `notModified`) when
    ///   there was no entry to revalidate.
    private func renew(
        _ cached: CachedResponse?, key: String, request: URLRequest, forbidsStoring: Bool, url: URL?,
        fields: [(String, String)], notModified: @autoclosure () -> HTTPErrorResponse
    ) async throws -> CachedResponse {
        guard let cached else {
            throw TransportError(
                .unexpectedNotModified, url: url,
                message: "304 Not Modified for a request that had no cached entry to revalidate.",
                response: notModified())
        }
        let revalidated = Self.revalidate(cached, withFields: fields)
        // Most 304s repeat their `Cache-Control` (`max-age`, `private`): only one that says
        // `no-store`, or a `Vary` other than the entry's, is worth the full check.
        let changesStorability = fields.contains { name, value in
            if name.equalsIgnoringASCIICase("Cache-Control") { return Self.mentionsNoStore(value) }
            if name.equalsIgnoringASCIICase("Vary") { return value != Self.header("Vary", in: cached.headers) }
            return false
        }
        // Judged on the 304's own fields too: a `no-store` or `Vary` the renewal could not write
        // (the stored head at its limits) still forbids keeping the entry. An entry whose ETag
        // changed into one that could not be sent back (too long, a list) is not kept either.
        if forbidsStoring
            || (changesStorability
                && (!Self.isStorable(revalidated.headers, varyAllowed: storableVaryHeaders, request: request)
                    || !Self.isStorable(
                        DeferredResponse.merged(fields), varyAllowed: storableVaryHeaders, request: request)))
            || (revalidated.etag != cached.etag && !Self.isUsableETag(revalidated.etag))
        {
            await removeEntry(for: key)
        } else if !(storeTouchesOnRead && Self.renewsOnlyDate(cached, revalidated)) {
            await storeEntry(revalidated, for: key)
        }
        ExchangeRecorder.note(.servedFromCache)
        return revalidated
    }

    /// Whether `renewed` is `entry` with nothing changed but its `Date` field (any spelling) and
    /// ``CachedResponse/storedAt``: the same status, tag, URL and other fields (a renewal never
    /// changes the body, which is not compared: 20 MB, each time).
    static func renewsOnlyDate(_ entry: CachedResponse, _ renewed: CachedResponse) -> Bool {
        guard entry.statusCode == renewed.statusCode, entry.etag == renewed.etag, entry.url == renewed.url
        else { return false }
        func withoutDate(_ headers: [String: String]) -> [String: String] {
            headers.filter { !$0.key.equalsIgnoringASCIICase("Date") }
        }
        return withoutDate(entry.headers) == withoutDate(renewed.headers)
    }

    /// The 2xx statuses whose body is a whole representation, which a 304 may later stand for:
    /// 200, 203 and 204. A 206 (a part), a 201 or a 202 (about something else) is never stored.
    static let storedStatusCodes: Set<Int> = [200, 203, 204]

    /// After a 2xx: stores an entry when the response is storable and carries an ETag that could
    /// be sent back (no CR, LF or NUL); otherwise drops the entry the request was made with, now
    /// stale. Both paths share it.
    private func update(
        _ key: String, after statusCode: Int, headers: [String: String], body: Data, url: URL?,
        request: URLRequest, hadEntry: Bool
    ) async {
        if Self.storedStatusCodes.contains(statusCode), let etag = Self.header("ETag", in: headers),
            Self.isUsableETag(etag),
            Self.isStorable(headers, varyAllowed: storableVaryHeaders, request: request)
        {
            await storeEntry(
                CachedResponse(
                    body: body, statusCode: statusCode, headers: Self.storedHeaders(headers), url: url,
                    etag: etag, storedAt: Date()),
                for: key)
        } else if hadEntry {
            await removeEntry(for: key)
        }
    }

    /// Adds `If-None-Match: etag` to `request`, which has none; returns whether it did. One
    /// assignment of the header fields (`URLRequest.adding(_:)`): `setValue` canonicalizes the
    /// name and checks the value character by character on Linux (~10k instructions on every
    /// revalidation). An `etag` with CR, LF or NUL (a hostile server's, from an entry stored
    /// before such ETags were refused) is left out, as `setValue` would silently drop it.
    static func addIfNoneMatch(_ etag: String, to request: inout URLRequest) -> Bool {
        guard isUsableETag(etag) else { return false }
        request = request.adding([("If-None-Match", etag)])
        return true
    }

    /// The longest ETag stored and sent back: 8 KiB.
    static let maxETagBytes = 8 * 1024

    /// Whether `etag` can be stored and sent back as `If-None-Match`: a header value (no CR, LF
    /// or NUL), at most ``maxETagBytes`` (a 256 KiB one went back on every request, and a front
    /// end answering 431 to it did so for good, the entry never replaced), and one entity tag:
    /// not `*` and not a list (`"a", "b"`), which as `If-None-Match` match any representation or
    /// several, so an old body could answer after the resource changed. An unquoted tag (a lax
    /// server's `abc123`) is kept when it has no comma or quote.
    static func isUsableETag(_ etag: String) -> Bool {
        guard etag.utf8.count <= maxETagBytes, RequestValidator.isValidHeaderValue(etag) else { return false }
        // By bytes: compared as `Character`s, a quote or comma followed by a combining mark
        // (`"a"\u{301}, "\u{301}b"`, a list) is another character and went unseen.
        var tag = Array(etag.utf8)[...]
        while let first = tag.first, first == 0x20 || first == 0x09 { tag.removeFirst() }
        while let last = tag.last, last == 0x20 || last == 0x09 { tag.removeLast() }
        if tag.starts(with: "W/".utf8) || tag.starts(with: "w/".utf8) { tag = tag.dropFirst(2) }
        let quote = UInt8(ascii: "\"")
        guard !tag.isEmpty, tag != [UInt8(ascii: "*")] else { return false }
        if tag.first == quote {
            // A quoted tag: one pair of quotes, around everything.
            return tag.count >= 2 && tag.last == quote && !tag.dropFirst().dropLast().contains(quote)
        }
        return !tag.contains(UInt8(ascii: ",")) && !tag.contains(quote)
    }

    /// The response headers kept in an entry: all but those that may carry a credential, by the
    /// names the logs redact (`Set-Cookie`, `Set-Cookie2`, `X-Access-Token`,
    /// `X-Amz-Security-Token`, any name with `token`, `session`, `secret`… in it). Such a value is
    /// never written to a store, and a response served from the cache after a 304 does not carry
    /// it again.
    static func storedHeaders(_ headers: [String: String]) -> [String: String] {
        headers.filter { name, _ in !isCredentialField(name) }
    }

    /// Whether a response field named `name` may carry a credential (``Redactor``'s sensitive
    /// names, which include every cookie-setting field).
    static func isCredentialField(_ name: String) -> Bool {
        Redactor.isSensitiveName(name)
    }

    /// The fields of a 304 that describe the 304 itself, not the stored representation: never
    /// copied into an entry.
    private static let notRevalidated = ["content-length", "transfer-encoding", "content-encoding", "connection"]

    /// Whether a response with `headers` may be stored with the default configuration: no
    /// `Cache-Control: no-store`, and a `Vary` naming only ``storableVaryHeaders-type.property`` (`*` never).
    public static func isStorable(_ headers: [String: String]) -> Bool {
        isStorable(headers, varyAllowed: storableVaryHeaders, request: nil)
    }

    /// Whether a response with `headers` to `request` may be stored when it may vary on
    /// `varyAllowed`. `Vary: Cookie` needs a `Cookie` on the request itself (without a request,
    /// it is allowed when `cookie` is in `varyAllowed`). A request's own `Cache-Control:
    /// no-store` forbids storing its response too (RFC 9111 §5.2.1.5: it was written, to disk
    /// with a `DiskETagStore`).
    static func isStorable(_ headers: [String: String], varyAllowed: Set<String>, request: URLRequest?) -> Bool {
        if saysNoStore(header("Cache-Control", in: headers))
            || saysNoStore(request?.value(forHTTPHeaderField: "Cache-Control"))
        {
            return false
        }
        if let vary = header("Vary", in: headers) {
            let fields = vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if let request, fields.contains("cookie"), request.value(forHTTPHeaderField: "Cookie") == nil {
                return false
            }
            return fields.allSatisfy { varyAllowed.contains($0) }
        }
        return true
    }

    /// Whether `value` holds `no-store` in any case, anywhere: a byte scan, without splitting
    /// or trimming (the caller then reads the directives properly).
    static func mentionsNoStore(_ value: String) -> Bool {
        let needle = Array("no-store".utf8)
        let bytes = value.utf8
        guard bytes.count >= needle.count else { return false }
        var start = bytes.startIndex
        while let end = bytes.index(start, offsetBy: needle.count, limitedBy: bytes.endIndex) {
            if zip(bytes[start..<end], needle).allSatisfy({ ($0 | 0x20) == $1 }) { return true }
            start = bytes.index(after: start)
        }
        return false
    }

    /// Whether a `Cache-Control` value holds the `no-store` directive.
    private static func saysNoStore(_ cacheControl: String?) -> Bool {
        guard let cacheControl else { return false }
        return cacheControl.split(separator: ",").contains {
            $0.trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("no-store")
        }
    }

    /// The cached entry with its headers updated by a 304's header fields (RFC 9111 §4.3.4),
    /// except the framing headers that describe the 304 itself and the fields that may carry a
    /// credential (see ``storedHeaders(_:)``).
    static func revalidate(_ cached: CachedResponse, withHeaders notModified: [String: String]) -> CachedResponse {
        revalidate(cached, withFields: notModified.map { ($0.key, $0.value) })
    }

    /// ``revalidate(_:withHeaders:)`` with the 304's fields as received: a name repeated (in any
    /// case) is merged as a response merges it, its values joined with ", " under its first
    /// spelling; a field without a name is ignored. The head is walked once
    /// (`DeferredResponse.forEachMerged`), without building a dictionary of it.
    static func revalidate(_ cached: CachedResponse, withFields fields: [(String, String)]) -> CachedResponse {
        var updated = cached
        // The bytes of the stored head, counted at the first write that could grow it.
        var storedBytes: Int?
        let limits = storedHeaderLimits
        DeferredResponse.forEachMerged(fields) { name, value in
            // Usually spelled as in the stored response and unchanged (all but `Date`): one
            // lookup, and nothing to check, since nothing is written (the checks below only
            // ever prevent a write).
            let current = updated.headers[name]
            if current == value { return }
            guard !isCredentialField(name), !notRevalidated.contains(where: { $0.equalsIgnoringASCIICase(name) }) else {
                return
            }
            // Each 304 may bring new names or longer values; the stored head keeps within the
            // default response limits (256 fields, 256 KiB), or each 304 could grow the entry,
            // and each rewrite of it, without end. A write that would pass them is skipped.
            let existing =
                current != nil ? name : updated.headers.keys.first(where: { $0.equalsIgnoringASCIICase(name) })
            let bytes =
                storedBytes ?? updated.headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
            let removed = existing.map { $0.utf8.count + (updated.headers[$0]?.utf8.count ?? 0) + 4 } ?? 0
            let total = bytes - removed + name.utf8.count + value.utf8.count + 4
            guard total <= limits.maxHeaderBytes, existing != nil || updated.headers.count < limits.maxHeaderCount
            else {
                storedBytes = bytes
                return
            }
            if let existing { updated.headers[existing] = nil }
            updated.headers[name] = value
            storedBytes = total
        }
        if let etag = header("ETag", in: updated.headers) { updated.etag = etag }
        updated.storedAt = Date()
        return updated
    }

    /// Whether a 304's `fields` name a representation other than `cached`'s: an `ETag` that
    /// differs from the entry's by weak comparison (RFC 9110 §8.8.3.2, `W/` ignored), or two
    /// `ETag` fields (a list names no one representation). RFC 9111
    /// §4.3.4 forbids using such a 304 to update the entry; used, it tied the old body to the new
    /// tag, and the server's later 304s for that tag served the old body for good. A 304
    /// without an `ETag` names none.
    ///
    /// Every revalidation runs it: the usual answer (the same tag) is one comparison, and the
    /// rest avoids Foundation's `trimmingCharacters` (about 11k instructions a call on Linux:
    /// with it, the check cost 26k per revalidation, the README stack 0.80x the bare transport).
    static func namesAnotherRepresentation(_ fields: [(String, String)], than cached: CachedResponse) -> Bool {
        var found: String?
        for (name, value) in fields where name.equalsIgnoringASCIICase("etag") {
            // Two `ETag` fields are a list (merged, it became the entry's tag and went back as
            // an `If-None-Match` of any length): never one representation.
            if found != nil { return true }
            found = value
        }
        guard let etag = found else { return false }
        if etag == cached.etag { return false }
        func opaque(_ tag: String) -> Substring {
            var tag = Substring(tag)
            while let first = tag.first, first == " " || first == "\t" { tag.removeFirst() }
            while let last = tag.last, last == " " || last == "\t" { tag.removeLast() }
            return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
        }
        return opaque(etag) != opaque(cached.etag)
    }

    /// The bounds a stored head keeps to when a 304 adds fields: the default ``ResponseLimits``.
    static let storedHeaderLimits = ResponseLimits()

    static func header(_ name: String, in headers: [String: String]) -> String? {
        headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }
}

extension ETagTransport: DeferredResponseTransport {}
