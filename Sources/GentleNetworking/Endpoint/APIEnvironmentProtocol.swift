import Foundation

/// Where an API lives: the base URL that endpoint paths are joined to.
public protocol APIEnvironmentProtocol: Sendable {
    /// The base URL, such as `https://api.company.com` or `https://host/v2`.
    ///
    /// `nil` means the environment is not configured; the service then throws
    /// ``NetworkError`` with kind ``NetworkError/Kind/missingBaseURL`` instead of crashing.
    var baseURL: URL? { get }
}

/// The standard environment: a base URL and nothing else.
public struct DefaultAPIEnvironment: APIEnvironmentProtocol {
    /// The base URL; `nil` when not configured.
    public let baseURL: URL?

    /// Creates an environment.
    ///
    /// - Parameter baseURL: The API's base URL; `nil` by default, which makes every request
    ///   fail with ``NetworkError/Kind/missingBaseURL``.
    public init(baseURL: URL? = nil) {
        self.baseURL = baseURL
    }
}
