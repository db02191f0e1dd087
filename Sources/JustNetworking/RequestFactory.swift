import GentleNetworking

/// Builds the `URLRequest` of a ``Request``: a ``Router`` gives the URL and method, then a
/// ``RequestBuilder`` configures the rest.
///
/// ```swift
/// RequestFactory(router: UserRouter.user(id: "12"), requestBuilder: addHeaders(["Accept": "application/json"]))
/// ```
public struct RequestFactory: Sendable {
    /// The endpoint: URL and method.
    public let router: any Router
    /// Applied to the request after its URL and method are set.
    public let requestBuilder: RequestBuilder

    /// Creates a factory.
    ///
    /// - Parameters:
    ///   - router: The endpoint.
    ///   - requestBuilder: ``identity`` (no change) by default.
    public init(router: any Router, requestBuilder: @escaping RequestBuilder = identity) {
        self.router = router
        self.requestBuilder = requestBuilder
    }

    /// The request: `router.completeURL`, the route's method, then ``requestBuilder``.
    ///
    /// When no base URL is set its URL is built on ``NetworkConfiguration/unsetBaseURL``; use
    /// ``makeURLRequest()`` to be told instead.
    public var urlRequest: URLRequest {
        request(for: router.completeURL)
    }

    private func request(for url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = router.route.method.rawValue
        return requestBuilder(request)
    }

    /// The request, or an error when it would be built on the placeholder base URL or with a
    /// header that cannot be sent.
    ///
    /// - Throws: ``JustNetworkingError/baseURLNotSet(router:)`` when the router's complete URL
    ///   is based on ``NetworkConfiguration/unsetBaseURL``: no global URL was ever set (or it was
    ///   cleared) and the router overrides neither ``Router/baseURL`` nor ``Router/completeURL``.
    ///   ``JustNetworkingError/invalidRequest(reason:)`` when ``addHeaders(_:)`` refused a header
    ///   (a name that is not an HTTP token, a value with CR, LF or NUL) or the built request
    ///   carries a header name or a method (set by a builder) that is not a token, or when the
    ///   route's path has a `.` or `..` segment (`files/../../admin`), which would take the
    ///   request, with its headers, out of the base URL's path.
    public func makeURLRequest() throws(JustNetworkingError) -> URLRequest {
        // One read of the URL: the global base URL may change between two.
        let url = router.completeURL
        if Self.isBasedOnUnsetBaseURL(url) {
            throw .baseURLNotSet(router: router.routeDescription)
        }
        // As for an Endpoint: `files/\(name)` with `../../admin` would leave the base path with
        // the headers meant for it (libcurl, URLSession and servers resolve dot segments).
        // The path of the URL actually built (a router may override completeURL and not use
        // the route's path at all).
        let builtPath = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        if let segment = PercentEncoding.dotSegment(in: builtPath) {
            throw .invalidRequest(
                reason: "The route path has a \"\(segment)\" segment: the server would resolve it and the "
                    + "request could leave the base URL's path (a value such as ../../admin put into a path).")
        }
        let (built, problem) = HeaderProblems.collecting { request(for: url) }
        if let problem { throw .invalidRequest(reason: problem) }
        do throws(TransportError) {
            try RequestValidator.validateMethod(built.httpMethod, url: url)
            for (name, value) in built.allHTTPHeaderFields ?? [:] {
                try RequestValidator.validateHeader(name: name, value: value, url: url)
            }
        } catch {
            throw .invalidRequest(reason: error.message)
        }
        return built
    }

    static func isBasedOnUnsetBaseURL(_ url: URL) -> Bool {
        let unset = NetworkConfiguration.unsetBaseURL.absoluteString
        let text = url.absoluteString
        guard text.hasPrefix(unset) else { return false }
        guard let next = text.dropFirst(unset.count).first else { return true }
        return next == "/" || next == "?" || next == "#"
    }
}
