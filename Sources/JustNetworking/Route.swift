/// Where a request goes, relative to its router's base URL, and with which method.
///
/// ```swift
/// Route(path: "user/\(id)", method: .get)
/// ```
public struct Route: Sendable, Hashable {
    /// The path appended to the base URL, with or without a leading `/`. All of it is path:
    /// `?`, `#`, `%` and every other character a path cannot hold are percent-encoded when the
    /// URL is built, as JustNetworking did (query items go through `addURLParams`).
    public var path: String
    /// The HTTP method.
    public var method: HTTPMethod

    /// Creates a route.
    ///
    /// - Parameters:
    ///   - path: Appended to the router's base URL with exactly one `/` between them.
    ///   - method: The HTTP method.
    public init(path: String, method: HTTPMethod) {
        self.path = path
        self.method = method
    }
}
