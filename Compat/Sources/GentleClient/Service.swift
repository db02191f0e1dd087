// Pending: needs TokenInvalidationHandler, HTTPNetworkService(invalidationHandler:) with optional
// decoder/encoder, RetryPolicy(jitter: nil), PinningTransport(pinnedDomains:configuration:),
// APIEnvironmentProtocol._baseURL, EndpointProtocol.from(_:jsonEncoder:), DateDecodingStrategies
// and DateEncodingStrategies, MatchingTransport, RequestPattern without a method.
import Foundation
import GentleNetworking

/// Logs the user out on a 401.
public struct LogoutOnInvalidToken: TokenInvalidationHandler {
    public let onLogout: @Sendable () async -> Void

    public init(onLogout: @escaping @Sendable () async -> Void) {
        self.onLogout = onLogout
    }

    public func handleInvalidToken() async {
        await onLogout()
    }
}

/// An environment of the app's own.
public struct StagingEnvironment: APIEnvironmentProtocol {
    public let _baseURL: URL?

    public init(region: String) {
        self._baseURL = URL(string: "https://\(region).staging.example.com")
    }
}

/// The service with every seed argument.
public func makeFullService(
    auth: any AuthServiceProtocol, onLogout: @escaping @Sendable () async -> Void
)
    -> HTTPNetworkService
{
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = DateDecodingStrategies.iso8601FractionalAndNonFractionalSeconds
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = DateEncodingStrategies.iso8601FractionalSeconds
    let retry = RetryTransport(
        inner: PinningTransport(pinnedDomains: [:], configuration: .ephemeral),
        policy: RetryPolicy(maxRetries: 1, baseDelay: 0.1, maxDelay: 1, jitter: nil))
    return HTTPNetworkService(
        transport: retry, authService: auth, invalidationHandler: LogoutOnInvalidToken(onLogout: onLogout),
        jsonDecoder: decoder, jsonEncoder: encoder)
}

/// The defaults passed as `nil`, as the seed's signature allows.
public let defaultedService = HTTPNetworkService(invalidationHandler: nil, jsonDecoder: nil, jsonEncoder: nil)

/// A request built the way the app previews it.
public func previewRequest() throws -> URLRequest {
    return try TodoEndpoint.create(title: "x").from(URL(string: "https://api.example.com")!, jsonEncoder: JSONEncoder())
}

/// Only the API host goes through the stub.
public func apiOnly(_ inner: any HTTPTransportProtocol) -> MatchingTransport {
    return MatchingTransport(
        pattern: RequestPattern(hostRegex: "^api\\.example\\.com$", pathRegex: ".*"), transport: inner)
}

/// Any method on a path.
public let anyMethodTodos = RequestPattern(path: "/todos")
