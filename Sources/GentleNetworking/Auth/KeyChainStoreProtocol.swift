/// A small string key-value store for secrets, such as the one an ``AuthServiceProtocol`` keeps
/// its token in.
///
/// ``SystemKeyChainStore`` is the platform's secure store (the Keychain on Apple platforms, a
/// private credentials file on Linux); ``MockKeyChainStore`` keeps values in memory for tests.
/// Implement it to keep tokens somewhere else.
public protocol KeyChainStoreProtocol: Sendable {
    /// Stores `value` under `key`, replacing any previous value.
    func save(_ value: String, forKey key: String) async throws
    /// The value stored under `key`, or `nil` when there is none.
    func value(forKey key: String) async throws -> String?
    /// Removes the value stored under `key`. Removing a key that has no value is not an error.
    func deleteValue(forKey key: String) async throws
}

/// The ``AuthServiceProtocol/keyChainStore`` of an auth service that declares none: every call
/// throws ``CredentialStoreError/Code/storeNotConfigured``, so a conformer that implements
/// neither the store nor the token methods fails loudly instead of dropping tokens.
struct UnconfiguredKeyChainStore: KeyChainStoreProtocol {
    private func failure() -> CredentialStoreError {
        CredentialStoreError(
            .storeNotConfigured,
            message: "This auth service declares no keyChainStore; implement keyChainStore or the token methods.")
    }

    func save(_ value: String, forKey key: String) async throws { throw failure() }
    func value(forKey key: String) async throws -> String? { throw failure() }
    func deleteValue(forKey key: String) async throws { throw failure() }
}
