import Foundation
import GentleNetworking

/// The app's transport stack, in the README's order, and the service over it.
public enum TodoStack {
    public static func makeService(auth: any AuthServiceProtocol = SystemKeyChainAuthService()) -> HTTPNetworkService {
        let base = URLSessionTransport(session: .shared)
        let etag = ETagTransport(inner: base, store: InMemoryETagStore(maxEntries: 50))
        let retry = RetryTransport(
            inner: etag,
            policy: RetryPolicy(maxRetries: 2, baseDelay: 0.2, maxDelay: 5, jitter: .equal))
        let reauth = ReauthTransport(inner: retry, authService: auth) {
            try await auth.saveAccessToken("refreshed")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return HTTPNetworkService(
            transport: reauth, authService: auth, jsonDecoder: decoder, jsonEncoder: JSONEncoder())
    }

    /// The default service, every argument defaulted.
    public static let plain = HTTPNetworkService()

    /// Re-authentication as the original's README writes it: the auth service and the inner
    /// transport left to their defaults.
    public static func refreshingTransport(refresh: @escaping @Sendable () async throws -> Void) -> ReauthTransport {
        return ReauthTransport(refreshToken: refresh)
    }

    /// Retries with the default policy and a custom `shouldRetry`.
    public static func patientTransport(_ inner: any HTTPTransportProtocol) -> RetryTransport {
        let policy = RetryPolicy(maxRetries: 5, jitter: .decorrelated) { statusCode, error in
            if statusCode == 503 { return true }
            return RetryPolicy.defaultShouldRetry(statusCode: statusCode, error: error)
        }
        return RetryTransport(inner: inner, policy: policy)
    }

    /// Pins the API's key.
    public static func pinnedTransport(keyHash: Data, certificate: Data) -> PinningTransport {
        return PinningTransport(pinnedDomains: [
            "api.example.com": PublicKeyPinningEvaluator(pinnedKeyHashes: [keyHash]),
            "cdn.example.com": CertificatePinningEvaluator(pinnedCertificates: [certificate]),
        ])
    }
}

/// Where the app keeps its API key in memory.
public actor APIKeyBox {
    private var key: String?

    public init(key: String? = nil) {
        self.key = key
    }

    public func get() -> String? {
        return key
    }

    public func set(_ key: String?) {
        self.key = key
    }
}

/// An auth service of the app's own, with a custom header and its own storage.
public struct APIKeyAuthService: AuthServiceProtocol {
    private let box: APIKeyBox

    public init(key: String? = nil) {
        self.box = APIKeyBox(key: key)
    }

    public var headerField: String { return "X-API-Key" }
    public var headerValuePrefix: String { return "" }

    public func loadAccessToken() async throws -> String? {
        return await box.get()
    }

    public func saveAccessToken(_ token: String) async throws {
        await box.set(token)
    }

    public func deleteAccessToken() async throws {
        await box.set(nil)
    }
}
