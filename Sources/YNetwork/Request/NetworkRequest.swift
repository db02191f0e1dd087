import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request to an API: a value that says where to go and what to send. Only ``path`` is
/// required; everything else has a default.
///
/// - ``basePath``: `nil` — the configuration's base path is used for relative paths.
/// - ``method``: `.GET`. ``headers``: `nil`. ``requestType``: `.JSON`. ``responseType``: `.JSON`.
/// - ``queryParameters``: `nil`. ``body``: `nil`.
/// - ``timeoutInterval``: `0` — the configuration's timeout, else the transport's default.
/// - ``cachePolicy``: `nil` — the configuration's policy, else `.useProtocolCachePolicy`.
/// - ``parserFactory``: `nil` — the configuration's factory.
/// - ``usesSession``: `true` — the session manager adds credentials and refreshes them on a 401,
///   for a request to the origin of its base path (an absolute path to another origin goes
///   without them).
public protocol NetworkRequest: Sendable {
    /// The base the ``path`` is relative to; `nil` by default.
    var basePath: PathRepresentable? { get }
    /// The path, relative to the base path, or an absolute `http(s)://` URL.
    var path: PathRepresentable { get }
    /// The HTTP method; `.GET` by default.
    var method: HttpMethod { get }
    /// Headers for this request, added after the configuration's; `nil` by default.
    var headers: HttpHeaders? { get }
    /// How the body is encoded; `.JSON` by default.
    var requestType: RequestContentType { get }
    /// How the response is parsed; `.JSON` by default.
    var responseType: ResponseContentType { get }
    /// The query parameters, form-encoded and sorted; `nil` by default.
    var queryParameters: ParametersBuilder? { get }
    /// The body; `nil` by default.
    var body: BodyBuilder? { get }
    /// This request's timeout in seconds; `0` (the default) defers to the configuration.
    var timeoutInterval: TimeInterval { get }
    /// This request's cache policy; `nil` (the default) defers to the configuration.
    var cachePolicy: URLRequest.CachePolicy? { get }
    /// The encoders and decoders for this request; `nil` (the default) defers to the configuration.
    var parserFactory: DataParserFactory? { get }
    /// Whether the session manager applies credentials and refreshes them; `true` by default.
    var usesSession: Bool { get }
}

extension NetworkRequest {
    /// `nil`: relative paths use the configuration's base path.
    public var basePath: PathRepresentable? { nil }
    /// `.GET`.
    public var method: HttpMethod { .GET }
    /// `nil`.
    public var headers: HttpHeaders? { nil }
    /// `.JSON`.
    public var requestType: RequestContentType { .JSON }
    /// `.JSON`.
    public var responseType: ResponseContentType { .JSON }
    /// `nil`.
    public var queryParameters: ParametersBuilder? { nil }
    /// `nil`.
    public var body: BodyBuilder? { nil }
    /// `0`: the configuration's timeout applies.
    public var timeoutInterval: TimeInterval { 0 }
    /// `nil`: the configuration's cache policy applies.
    public var cachePolicy: URLRequest.CachePolicy? { nil }
    /// `nil`: the configuration's parser factory applies.
    public var parserFactory: DataParserFactory? { nil }
    /// `true`.
    public var usesSession: Bool { true }
}
