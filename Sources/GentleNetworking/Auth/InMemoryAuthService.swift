/// An auth service that keeps the token in memory only: for tests, previews and short-lived
/// processes such as command-line tools.
///
/// The token lives in its ``keyChainStore``, a ``MockKeyChainStore``, under ``keyChainKey``.
public final class InMemoryAuthService: AuthServiceProtocol {
    private let store: MockKeyChainStore

    /// The in-memory store holding the token.
    public var keyChainStore: any KeyChainStoreProtocol { store }

    /// Creates a store holding `token`; empty by default.
    public init(token: String? = nil) {
        var values: [String: String] = [:]
        if let token { values["accessToken"] = token }
        self.store = MockKeyChainStore(values: values)
    }
}
