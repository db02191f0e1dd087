import Foundation
import GentleNetworking

/// Builds the URL of a ``NetworkRequest``.
///
/// - A path that starts with `http://` or `https://` (any case) is absolute and used as it is,
///   but for characters its path, query or fragment cannot hold, which are percent-encoded
///   (existing escapes stay).
/// - Otherwise the base is the request's ``NetworkRequest/basePath``, else the configuration's,
///   joined to the path with exactly one `/` (an empty path too: `…/v1/`); characters a path cannot hold are
///   percent-encoded. A query in the base (`https://h/v1?key=K`) follows the joined path, ahead
///   of the path's own; a fragment in the base or the path is dropped. No base at all is
///   ``NetworkError/noBasePath``.
/// - Query parameters are percent-encoded, written `key=value`, sorted as text (as Y-Network
///   sorts them) and joined with `&`;
///   `true` is a bare key (an empty key with `true` is left out: it would be an empty pair),
///   `false` and `nil` are left out, arrays repeat their key. They are
///   appended with `?`, or `&` when the path already has a query. With a `.formURLEncoded`
///   request type, spaces are written `+`.
/// - Text that still does not parse as a URL, a URL that is not `http`/`https` with a host
///   (an `ftp://` path is absolute but never sent), or a built path with a `.` or `..` segment
///   (`%2E%2E` and `..;` too, in an absolute path as in a relative one) is
///   ``NetworkError/invalidURL``.
///
/// An `open` class, as in Y-Network, so a subclass can change how paths or queries are made; it
/// has no state, so it is `Sendable`.
open class URLBuilder: @unchecked Sendable {
    // @unchecked: no stored state; a subclass that adds mutable state must protect it itself.

    /// Creates a builder.
    public init() {}

    /// The path joined to its base, without the query. Its signature is Y-Network's, so a
    /// subclass written for Y-Network overrides it unchanged.
    ///
    /// - Throws: ``NetworkError/noBasePath`` for a relative path with no base;
    ///   ``NetworkError/invalidURL`` for a relative path with a `.` or `..` segment
    ///   (`users/../../admin`, `%2E%2E` too), which would take the request, with the session's
    ///   credential, out of the base path.
    open func path(for request: NetworkRequest, configuration: NetworkManagerConfiguration) throws -> String {
        try Self.joinedPath(for: request, basePath: configuration.basePath)
    }

    /// ``path(for:configuration:)`` with the configuration's base path, or none.
    static func joinedPath(for request: NetworkRequest, basePath: PathRepresentable?) throws -> String {
        let path = request.path.pathValue
        if path.isAbsoluteURLPath { return encodedAbsolute(path) }
        guard let base = (request.basePath ?? basePath)?.pathValue else {
            throw NetworkError.noBasePath
        }
        // A base with a query of its own (`https://h/v1?key=K`) keeps it after the joined path,
        // ahead of the path's own: joined as text, the path went into the query
        // (`…/v1?key=K/users`). A fragment is never sent and is dropped.
        var trimmedBase = Substring(base)
        if let hash = trimmedBase.firstIndex(of: "#") { trimmedBase = trimmedBase[..<hash] }
        var baseQuery: Substring = ""
        if let question = trimmedBase.firstIndex(of: "?") {
            baseQuery = trimmedBase[trimmedBase.index(after: question)...]
            trimmedBase = trimmedBase[..<question]
        }
        while trimmedBase.hasSuffix("/") { trimmedBase.removeLast() }
        // Characters a path cannot hold (spaces, non-ASCII) are percent-encoded; existing escapes
        // stay, and a query already in the path is kept as it is.
        // A fragment is never sent: dropped with everything after it, as `URL(string:)` did in
        // Y-Network (encoded, `users#top` asked for `users%23top`, and a `?` after the `#` made
        // the fragment's text a query).
        let relative = path.drop { $0 == "/" }.prefix { $0 != "#" }
        let queryStart = relative.firstIndex(of: "?") ?? relative.endIndex
        let trimmedPath = PercentEncoding.path(String(relative[..<queryStart]))
        // As for an Endpoint: `users/\(id)` with `../../admin` would leave the base path with the
        // session's credential (libcurl, URLSession and servers resolve dot segments).
        if PercentEncoding.dotSegment(in: trimmedPath) != nil {
            throw NetworkError.invalidURL
        }
        // Exactly one `/` between base and path, also for an empty path (`""` or `"/"` asks for
        // `…/v1/`), as Y-Network joins them: a server may tell `/v1/` from `/v1`.
        let joined = trimmedBase + "/" + trimmedPath
        // The queries are encoded as a path is (existing escapes kept): left to `URL(string:)`,
        // a space or `ç` in one made it re-encode the whole query, `%` included, and the
        // parameters added next arrived encoded twice.
        let pathQuery = PercentEncoding.query(String(relative[queryStart...].dropFirst()))
        if baseQuery.isEmpty {
            return joined + (queryStart == relative.endIndex ? "" : "?" + pathQuery)
        }
        return joined + "?" + PercentEncoding.query(String(baseQuery)) + (pathQuery.isEmpty ? "" : "&" + pathQuery)
    }

    /// An absolute path with its path, query and fragment encoded as a relative one's are
    /// (existing escapes kept); the scheme and authority as they are. Left to `URL(string:)`, a
    /// space or `ç` in it made corelibs re-encode the whole text, `%` included, so the
    /// parameters appended next arrived encoded twice (`new%2520york`).
    static func encodedAbsolute(_ path: String) -> String {
        guard let separator = path.range(of: "://", options: .literal) else { return path }
        let rest = path[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var tail = rest[authorityEnd...]
        var fragment: Substring?
        if let hash = tail.firstIndex(of: "#") {
            fragment = tail[tail.index(after: hash)...]
            tail = tail[..<hash]
        }
        var query: Substring?
        if let question = tail.firstIndex(of: "?") {
            query = tail[tail.index(after: question)...]
            tail = tail[..<question]
        }
        return path[..<authorityEnd] + PercentEncoding.path(String(tail))
            + (query.map { "?" + PercentEncoding.query(String($0)) } ?? "")
            + (fragment.map { "#" + PercentEncoding.query(String($0)) } ?? "")
    }

    /// The full URL of `request`. With a configuration, the path comes from
    /// ``path(for:configuration:)`` (a subclass's override included); without one (a manager
    /// used unconfigured), only an absolute path or the request's own base path can give one.
    ///
    /// - Throws: ``NetworkError/noBasePath`` or ``NetworkError/invalidURL``.
    open func url(for request: NetworkRequest, configuration: NetworkManagerConfiguration?) throws -> URL {
        var text =
            try configuration.map { try path(for: request, configuration: $0) }
            ?? Self.joinedPath(for: request, basePath: nil)
        if let parameters = request.queryParameters?.parameters, !parameters.isEmpty {
            let query = queryString(with: parameters, contentType: request.requestType)
            if !query.isEmpty {
                // Before a fragment (an absolute path may carry one, `https://h/x#s`): after it,
                // the query would never be sent.
                let hash = text.firstIndex(of: "#") ?? text.endIndex
                let head = text[..<hash]
                text = head + (head.contains("?") ? "&" : "?") + query + text[hash...]
            }
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        else {
            throw NetworkError.invalidURL
        }
        // The path of the URL actually built, whatever made it (an absolute path, a subclass's
        // `path(for:configuration:)`): `https://h/v1/files/\(name)` with `../../admin` would
        // otherwise reach /admin with the session's credential (libcurl and servers resolve it).
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            PercentEncoding.dotSegment(in: components.percentEncodedPath) == nil
        else {
            throw NetworkError.invalidURL
        }
        return url
    }

    /// `parameters` as a sorted, percent-encoded query (spaces as `+` for `.formURLEncoded`):
    /// each field through ``queryParameterString(field:value:contentType:)``, so a subclass that
    /// overrides it changes how its fields are written, as in Y-Network.
    open func queryString(with parameters: Parameters, contentType: RequestContentType) -> String {
        // The encoded pairs are sorted as text, as in Y-Network (by key alone, `a=1` would come
        // before `a-b=2`).
        parameters.compactMap { field, value in
            queryParameterString(field: field, value: value, contentType: contentType)
        }.sorted().joined(separator: "&")
    }

    /// One `field=value` query pair, percent-encoded as ``queryString(with:contentType:)``
    /// encodes it (spaces as `+` for `.formURLEncoded`, `%20` otherwise).
    ///
    /// - Returns: `field` alone for `true`; `nil` for `false`, `nil` and an empty array (they are
    ///   left out of a query); `field=a&field=b` for an array.
    open func queryParameterString(field: String, value: Any, contentType: RequestContentType) -> String? {
        let pair = FormURLEncoder.encodeAny([field: value], spaceAsPlus: contentType == .formURLEncoded)
        return pair.isEmpty ? nil : pair
    }
}

extension String {
    /// Whether this starts with `http://`, `https://`, `ftp://` or `ftps://` (any case), as in
    /// Y-Network. Only `http` and `https` URLs are sent: ``URLBuilder`` rejects the others with
    /// ``NetworkError/invalidURL``.
    public var isAbsoluteURLPath: Bool {
        let lowered = prefix(8).lowercased()
        return ["http://", "https://", "ftp://", "ftps://"].contains { lowered.hasPrefix($0) }
    }
}
