import Foundation

/// Describes one API operation: where it lives, how it is called and what it sends.
///
/// Conform an enum with one case per operation, as in the README. The service joins `path` to
/// the environment's base URL, appends `query`, encodes `body` as a JSON object and, when
/// `requiresAuth` is `true`, asks the auth service to add credentials.
public protocol EndpointProtocol: Sendable {
    /// The path appended to the base URL, such as `"/api/model/42"`.
    ///
    /// Joined to the base URL's own path with exactly one `/`. Characters that are not allowed
    /// in a URL path (spaces, non-ASCII) are percent-encoded.
    var path: String { get }
    /// The HTTP method.
    var method: HTTPMethod { get }
    /// Query items appended after any query the base URL already has; `nil` for none.
    ///
    /// Names and values are percent-encoded strictly: `+`, `&`, `=`, spaces and non-ASCII
    /// characters never leak through as syntax.
    var query: [URLQueryItem]? { get }
    /// The JSON object sent as the body, with `Content-Type: application/json`; `nil` for none.
    var body: [String: EndpointAnyEncodable]? { get }
    /// Whether the auth service should add its credentials to the request.
    var requiresAuth: Bool { get }
    /// Extra request headers. Empty by default.
    ///
    /// These are applied after the defaults (`Accept`, `Content-Type`), so they can override
    /// them, and before authorization, so the auth service has the last word on credentials.
    var headers: [String: String] { get }
    /// The request timeout in seconds; `nil` (the default) keeps the transport's own timeout.
    var timeoutInterval: TimeInterval? { get }
    /// The most decoded response body bytes this endpoint accepts in memory; `nil` (the
    /// default) keeps the transport's limit (``ResponseLimits/maxBodyBytes``, 100 MiB by
    /// default). Past it the call throws ``NetworkError`` of kind
    /// `.transport(.responseTooLarge)`. Use `Int64.max` for an endpoint with no limit.
    var maxResponseBytes: Int64? { get }
}

extension EndpointProtocol {
    /// Builds the `URLRequest` for this endpoint joined to `baseURL`, as the service would send
    /// it but without credentials: the path joined with exactly one `/`, the query strictly
    /// encoded, the body as JSON with `Content-Type: application/json`, and ``headers`` checked.
    ///
    /// - Parameters:
    ///   - baseURL: The API's base URL, such as `https://api.example.com/v2`.
    ///   - jsonEncoder: Encodes ``body``; a plain `JSONEncoder` by default.
    /// - Throws: ``NetworkError``: ``NetworkError/Kind/missingBaseURL`` for
    ///   ``DefaultAPIEnvironment/unsetBaseURL``, ``NetworkError/Kind/invalidURL``,
    ///   ``NetworkError/Kind/encodingFailed`` or ``NetworkError/Kind/invalidRequest``, as
    ///   ``EndpointRequestBuilder/makeRequest(for:in:)`` does.
    public func from(_ baseURL: URL, jsonEncoder: JSONEncoder = JSONEncoder()) throws(NetworkError) -> URLRequest {
        try EndpointRequestBuilder(jsonEncoder: jsonEncoder).makeRequest(for: self, baseURL: baseURL)
    }

    /// No extra headers by default.
    public var headers: [String: String] { [:] }
    /// No per-endpoint timeout by default.
    public var timeoutInterval: TimeInterval? { nil }
    /// The transport's body limit by default.
    public var maxResponseBytes: Int64? { nil }
}
