import Foundation

/// A ready-made endpoint, for calls that do not deserve an enum case of their own.
///
/// ```swift
/// let health = Endpoint(path: "/health", method: .get)
/// ```
public struct Endpoint: EndpointProtocol {
    /// The path joined to the base URL.
    public var path: String
    /// The HTTP method.
    public var method: HTTPMethod
    /// Query items; `nil` for none.
    public var query: [URLQueryItem]?
    /// The JSON object body; `nil` for none.
    public var body: [String: EndpointAnyEncodable]?
    /// Whether credentials are added.
    public var requiresAuth: Bool
    /// Extra request headers.
    public var headers: [String: String]
    /// A per-request timeout in seconds; `nil` keeps the transport's.
    public var timeoutInterval: TimeInterval?
    /// The most decoded body bytes accepted in memory; `nil` keeps the transport's limit.
    public var maxResponseBytes: Int64?

    /// Creates an endpoint.
    ///
    /// - Parameters:
    ///   - path: The path joined to the environment's base URL.
    ///   - method: The HTTP method.
    ///   - query: Query items; `nil` by default.
    ///   - body: A JSON object body; `nil` by default.
    ///   - requiresAuth: Whether credentials are added; `false` by default.
    ///   - headers: Extra headers; none by default.
    ///   - timeoutInterval: A per-request idle timeout in seconds; `nil` keeps the transport's.
    ///     Any `Double` is safe: NaN, zero and negative values keep the transport's; infinite
    ///     and huge values are capped.
    ///   - maxResponseBytes: The most decoded body bytes accepted in memory; `nil` (the default)
    ///     keeps the transport's limit (100 MiB by default).
    public init(
        path: String,
        method: HTTPMethod,
        query: [URLQueryItem]? = nil,
        body: [String: EndpointAnyEncodable]? = nil,
        requiresAuth: Bool = false,
        headers: [String: String] = [:],
        timeoutInterval: TimeInterval? = nil,
        maxResponseBytes: Int64? = nil
    ) {
        self.path = path
        self.method = method
        self.query = query
        self.body = body
        self.requiresAuth = requiresAuth
        self.headers = headers
        self.timeoutInterval = timeoutInterval
        self.maxResponseBytes = maxResponseBytes
    }
}
