import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Credentials for a ``NetworkManager``: applied to every request whose
/// ``NetworkRequest/usesSession`` is `true` and whose URL has the origin of its base path (an
/// absolute path to another origin goes without them), and refreshed when the server answers 401.
///
/// On a 401 the manager calls ``refresh(networkManager:)`` once for all requests that failed
/// with the same credentials (concurrent 401s share one refresh), then applies the session
/// again and retries each request once. A second 401 is ``NetworkError/unauthenticated``.
public protocol SessionManager: Sendable {
    /// Adds the credentials to `request`, for example an `Authorization` header.
    func apply(_ request: inout URLRequest)

    /// Refreshes the credentials; returns whether it succeeded. Requests sent from inside it
    /// should set ``NetworkRequest/usesSession`` to `false`, or a failing refresh would wait
    /// on itself.
    func refresh(networkManager: NetworkManager) async -> Bool
}
