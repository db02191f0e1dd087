import GentleNetworking

/// Describes one family of endpoints: the ``Route`` of each case and the base URL it hangs off.
///
/// ```swift
/// enum UserRouter: Router {
///     case user(id: String)
///
///     var route: Route {
///         switch self {
///         case .user(let id): Route(path: "user/\(id)", method: .get)
///         }
///     }
/// }
/// ```
///
/// Only ``route`` must be written; ``baseURL`` and ``completeURL`` have defaults. As in
/// JustNetworking, a router is not `CustomStringConvertible` by this protocol: printing one shows
/// what Swift shows for the type (an enum's case, `user(id: "12")`), unless it says otherwise.
public protocol Router: Sendable {
    /// The path and method of this endpoint.
    var route: Route { get }
    /// The URL ``route`` is relative to.
    ///
    /// By default ``NetworkConfiguration/shared``'s current URL, read each time, or
    /// ``NetworkConfiguration/unsetBaseURL`` while none is set (the request then fails with
    /// ``JustNetworkingError/baseURLNotSet(router:)`` when it runs).
    var baseURL: URL { get }
    /// The URL the request is sent to.
    ///
    /// By default ``baseURL`` and the route's path joined by exactly one `/`.
    var completeURL: URL { get }
}

extension Router {
    /// The global base URL of ``NetworkConfiguration/shared``, or
    /// ``NetworkConfiguration/unsetBaseURL`` while none is set.
    public var baseURL: URL {
        NetworkConfiguration.shared.currentURL ?? NetworkConfiguration.unsetBaseURL
    }

    /// ``baseURL`` and `route.path` joined by exactly one `/`.
    ///
    /// - `https://h` + `user/12` or `/user/12` gives `https://h/user/12`; the base's own path is
    ///   kept (`https://h/api` + `user` gives `https://h/api/user`).
    /// - An empty path gives ``baseURL`` itself.
    /// - The route's path is a path, all of it, as JustNetworking's `appendingPathComponent`
    ///   took it: every character a path cannot hold (spaces, non-ASCII, `?`, `#`, `%`) is
    ///   percent-encoded, so `files/report#1.pdf` asks for `/files/report%231.pdf` and
    ///   `a?admin=1` adds no query. Give query items with `addURLParams`.
    /// - A query and fragment on the base URL are kept.
    public var completeURL: URL {
        URLJoiner.join(baseURL, route.path)
    }

    /// The HTTP method of ``route``, as JustNetworking's `Router` extension names it.
    public var method: HTTPMethod {
        route.method
    }

    /// The method and path, such as `GET user/12`, with control characters escaped (a path
    /// built from a value with CR or LF cannot add a line to a log): what errors name a router by.
    package var routeDescription: String {
        "\(route.method.rawValue) \(PrintableText.escaping(route.path))"
    }
}
