import Foundation

/// Where an API lives: the base URL that endpoint paths are joined to.
///
/// Conform by providing `_baseURL`, as in the seed (DocC does not list members whose names
/// start with an underscore; it is this protocol's one requirement):
/// ```swift
/// struct Production: APIEnvironmentProtocol {
///     var _baseURL: URL? { URL(string: "https://api.company.com/v2") }
/// }
/// ```
public protocol APIEnvironmentProtocol: Sendable {
    /// The base URL, such as `https://api.company.com` or `https://host/v2`.
    ///
    /// `nil` means the environment is not configured; the service then throws
    /// ``NetworkError`` with kind ``NetworkError/Kind/missingBaseURL`` and sends nothing (the
    /// seed crashed instead).
    var _baseURL: URL? { get }
}

extension APIEnvironmentProtocol {
    /// The base URL, or ``DefaultAPIEnvironment/unsetBaseURL`` when `_baseURL` is `nil`.
    ///
    /// The seed called `fatalError` here. Ours never crashes: an unconfigured environment
    /// answers the placeholder, and a request built on it is refused with
    /// ``NetworkError/Kind/missingBaseURL`` before anything is sent (by ``HTTPNetworkService``,
    /// ``EndpointRequestBuilder`` and ``EndpointProtocol/from(_:jsonEncoder:)``).
    public var baseURL: URL { _baseURL ?? DefaultAPIEnvironment.unsetBaseURL }
}

/// The standard environment: a base URL and nothing else.
public struct DefaultAPIEnvironment: APIEnvironmentProtocol, Equatable {
    /// The base URL; `nil` when not configured.
    public let _baseURL: URL?

    /// Creates an environment.
    ///
    /// - Parameter baseURL: The API's base URL; `nil` by default, which makes every request
    ///   fail with ``NetworkError/Kind/missingBaseURL``.
    public init(baseURL: URL? = nil) {
        self._baseURL = baseURL
    }

    /// What ``APIEnvironmentProtocol/baseURL`` answers for an environment without a base URL:
    /// `file:///gentlenetworking-base-url-not-set`. A request built on it is never sent.
    public static let unsetBaseURL = URL(fileURLWithPath: "/gentlenetworking-base-url-not-set")
}
