import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Stores an access token and adds it to requests that need it.
///
/// Every requirement has a default, so there are two ways to conform:
/// - declare ``keyChainStore`` (and optionally ``keyChainKey``): the token methods then read
///   and write the token under ``keyChainKey`` in that store;
/// - or implement ``loadAccessToken()``, ``saveAccessToken(_:)`` and ``deleteAccessToken()``
///   yourself, keeping the token anywhere.
///
/// `headerField`, `headerValuePrefix` and ``authorize(_:)`` default to sending
/// `Authorization: Bearer <token>`. A conformer that declares neither a store nor the token
/// methods compiles, but its token methods throw ``CredentialStoreError/Code/storeNotConfigured``.
public protocol AuthServiceProtocol: Sendable {
    /// The header that carries the credential; `"Authorization"` by default.
    var headerField: String { get }
    /// The text before the token; `"Bearer "` by default.
    var headerValuePrefix: String { get }
    /// The key the token is stored under in ``keyChainStore``; `"accessToken"` by default.
    var keyChainKey: String { get }
    /// The store the default token methods use.
    ///
    /// The default is a placeholder whose every call throws
    /// ``CredentialStoreError/Code/storeNotConfigured``: declare a store, such as
    /// ``SystemKeyChainStore`` or ``MockKeyChainStore``, or implement the token methods.
    var keyChainStore: any KeyChainStoreProtocol { get }

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
    /// `"accessToken"`.
    public var keyChainKey: String { "accessToken" }
    /// A placeholder that throws ``CredentialStoreError/Code/storeNotConfigured`` on every call.
    public var keyChainStore: any KeyChainStoreProtocol { UnconfiguredKeyChainStore() }

    /// The value under ``keyChainKey`` in ``keyChainStore``.
    ///
    /// Errors of the store propagate: an unreadable store is not reported as "no token".
    public func loadAccessToken() async throws -> String? {
        try await keyChainStore.value(forKey: keyChainKey)
    }

    /// Stores `token` under ``keyChainKey`` in ``keyChainStore``.
    public func saveAccessToken(_ token: String) async throws {
        try await keyChainStore.save(token, forKey: keyChainKey)
    }

    /// Removes the value under ``keyChainKey`` from ``keyChainStore``.
    public func deleteAccessToken() async throws {
        try await keyChainStore.deleteValue(forKey: keyChainKey)
    }

    /// Adds `headerField: headerValuePrefix + token` when a non-empty token is stored.
    ///
    /// - Throws: ``TransportError`` (`.invalidRequest`, naming the header, never the token) when
    ///   the header would not be a valid field (a token with CR, LF or NUL, as a careless refresh
    ///   endpoint can hand out): Foundation's `setValue` drops such a value without a word on
    ///   Linux, and the request would go out with no credential at all.
    public func authorize(_ request: URLRequest) async throws -> URLRequest {
        guard let token = try await loadAccessToken(), !token.isEmpty else { return request }
        var authorized = request
        try RequestValidator.setHeader(headerValuePrefix + token, named: headerField, on: &authorized)
        return authorized
    }
}
