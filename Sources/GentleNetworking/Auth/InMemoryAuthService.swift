/// An auth service that keeps the token in memory only: for tests, previews and short-lived
/// processes such as command-line tools.
public final class InMemoryAuthService: AuthServiceProtocol {
    private let token: Locked<String?>

    /// Creates a store holding `token`; empty by default.
    public init(token: String? = nil) {
        self.token = Locked(token)
    }

    /// The current token.
    public func loadAccessToken() async throws -> String? {
        token.current
    }

    /// Replaces the token.
    public func saveAccessToken(_ token: String) async throws {
        self.token.withLock { $0 = token }
    }

    /// Forgets the token.
    public func deleteAccessToken() async throws {
        token.withLock { $0 = nil }
    }
}
