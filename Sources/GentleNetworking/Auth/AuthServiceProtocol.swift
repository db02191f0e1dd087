import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Stores an access token and adds it to requests that need it.
///
/// Implement the three storage methods; `headerField`, `headerValuePrefix` and
/// ``authorize(_:)`` have defaults that send `Authorization: Bearer <token>`.
public protocol AuthServiceProtocol: Sendable {
    /// The header that carries the credential; `"Authorization"` by default.
    var headerField: String { get }
    /// The text before the token; `"Bearer "` by default.
    var headerValuePrefix: String { get }

    /// The stored token, or `nil` when there is none.
    func loadAccessToken() async throws -> String?
    /// Stores `token`, replacing any previous one.
    func saveAccessToken(_ token: String) async throws
    /// Removes the stored token. Removing when there is none is not an error.
    func deleteAccessToken() async throws
    /// Returns `request` with the credential header added, when a token exists.
    ///
    /// Without a token (or with an empty one) the request is returned unchanged.
    func authorize(_ request: URLRequest) async throws -> URLRequest
}

extension AuthServiceProtocol {
    /// `"Authorization"`.
    public var headerField: String { "Authorization" }
    /// `"Bearer "`.
    public var headerValuePrefix: String { "Bearer " }

    /// Adds `headerField: headerValuePrefix + token` when a non-empty token is stored.
    public func authorize(_ request: URLRequest) async throws -> URLRequest {
        guard let token = try await loadAccessToken(), !token.isEmpty else { return request }
        var authorized = request
        authorized.setValue(headerValuePrefix + token, forHTTPHeaderField: headerField)
        return authorized
    }
}
