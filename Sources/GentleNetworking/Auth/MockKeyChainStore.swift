/// An in-memory ``KeyChainStoreProtocol`` for tests and previews: nothing is persisted, and
/// each instance has its own values.
///
/// ```swift
/// let store = MockKeyChainStore()
/// try await store.save("token", forKey: "accessToken")
/// ```
public actor MockKeyChainStore: KeyChainStoreProtocol {
    /// Everything stored, by key.
    public private(set) var values: [String: String]

    /// Creates a store holding `values`; empty by default.
    public init(values: [String: String] = [:]) {
        self.values = values
    }

    /// Stores `value` under `key`.
    public func save(_ value: String, forKey key: String) async throws {
        values[key] = value
    }

    /// The value under `key`, or `nil`.
    public func value(forKey key: String) async throws -> String? {
        values[key]
    }

    /// Removes the value under `key`, if any.
    public func deleteValue(forKey key: String) async throws {
        values[key] = nil
    }
}
