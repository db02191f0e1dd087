import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a ``NetworkManager`` builds and sends requests. Every field has a default, and a
/// manager that was never configured uses `NetworkManagerConfiguration()`.
public struct NetworkManagerConfiguration: Sendable {
    /// The base of relative paths; `nil` by default. A request's own base path wins.
    public let basePath: PathRepresentable?
    /// Headers added to every request (a request's own headers win); `nil` by default.
    ///
    /// A credential header among them (`Authorization`, `Cookie`, `X-API-Key` and the rest of
    /// `Origin.credentialHeaders`, or a name that says it holds one, such as `X-Auth-Token`) is
    /// added only to requests to this configuration's base path's origin (scheme, host, port): a
    /// request whose path is an absolute URL elsewhere (a `next` link, a CDN, a presigned upload
    /// URL), or whose own base path is elsewhere (an S3 bucket), is sent without it. With no base
    /// path, or one that is not an absolute URL, every request gets every header.
    public let headers: HttpHeaders?
    /// Encoders and decoders; ``JSONDataParserFactory`` by default. A request's own wins.
    public let parserFactory: DataParserFactory
    /// The timeout in seconds; `0` (the default) for the transport's own. A request's own
    /// non-zero timeout wins.
    public let timeoutInterval: TimeInterval
    /// The cache policy; `nil` (the default) for `.useProtocolCachePolicy`. A request's own wins.
    public let cachePolicy: URLRequest.CachePolicy?
    /// What sends requests; ``URLNetworkEngine`` by default.
    public let networkEngine: NetworkEngine
    /// How credentials are refreshed on a 401: at most 3 refreshes per 60 s, each given 30 s, by
    /// default. See ``SessionRefreshPolicy``.
    public var sessionRefreshPolicy: SessionRefreshPolicy
    /// The most bytes of a 2xx body a download to a file (``NetworkManager``'s
    /// `submitBackgroundDownload`) may write; `nil` (the default) for no limit, as downloads to a
    /// file have none by default. Past it the transfer stops and fails with
    /// `TransportError(.responseTooLarge)`, no file left. The body of any other status is held to
    /// the in-memory limit (100 MiB) whatever this says.
    public var maxDownloadBytes: Int64?
    private var delegateBox: WeakSessionDelegate

    /// A `URLSession` delegate, held weakly, for a `URLSession`-backed engine; `nil` by default.
    /// Settable, as Y-Network's `weak var` is (the configuration stays a `Sendable` value).
    public var sessionDelegate: URLSessionDelegate? {
        get { delegateBox.value }
        set { delegateBox = WeakSessionDelegate(newValue) }
    }

    /// Creates a configuration; ``sessionRefreshPolicy`` is `SessionRefreshPolicy()` by default.
    public init(
        basePath: PathRepresentable? = nil, headers: HttpHeaders? = nil,
        parserFactory: DataParserFactory = JSONDataParserFactory(), timeoutInterval: TimeInterval = 0,
        cachePolicy: URLRequest.CachePolicy? = nil, sessionDelegate: URLSessionDelegate? = nil,
        networkEngine: NetworkEngine = URLNetworkEngine(),
        sessionRefreshPolicy: SessionRefreshPolicy = SessionRefreshPolicy()
    ) {
        self.sessionRefreshPolicy = sessionRefreshPolicy
        self.basePath = basePath
        self.headers = headers
        self.parserFactory = parserFactory
        self.timeoutInterval = max(0, timeoutInterval)
        self.cachePolicy = cachePolicy
        self.delegateBox = WeakSessionDelegate(sessionDelegate)
        self.networkEngine = networkEngine
    }

    /// The part of the configuration the engine sets itself up with.
    public var engineConfiguration: NetworkEngineConfiguration {
        NetworkEngineConfiguration(
            headers: headers, timeoutInterval: timeoutInterval, cachePolicy: cachePolicy,
            sessionDelegate: sessionDelegate)
    }
}
