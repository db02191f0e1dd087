// Pending: needs KeyChainStoreProtocol, SystemKeyChainStore(service:), MockKeyChainStore,
// KeyChainStoreError, AuthServiceProtocol.keyChainKey/keyChainStore and the default
// load/save/delete that use them.
import Foundation
import GentleNetworking

/// An auth service that keeps its token under a key of its own, relying on the protocol's
/// default `loadAccessToken`/`saveAccessToken`/`deleteAccessToken`.
public struct SessionAuthService: AuthServiceProtocol {
    public let keyChainStore: any KeyChainStoreProtocol

    public init(keyChainStore: any KeyChainStoreProtocol = SystemKeyChainStore(service: "com.example.todo")) {
        self.keyChainStore = keyChainStore
    }

    public var keyChainKey: String { return "sessionToken" }
}

/// A store of the app's own, in memory.
public actor DictionaryKeyChainStore: KeyChainStoreProtocol {
    private var values: [String: String] = [:]

    public init() {}

    public func save(_ value: String, forKey key: String) async throws {
        guard !value.isEmpty else { throw KeyChainStoreError.stringEncodingFailed }
        values[key] = value
    }

    public func value(forKey key: String) async throws -> String? {
        return values[key]
    }

    public func deleteValue(forKey key: String) async throws {
        values[key] = nil
    }
}

/// What the app tells the user for a keychain failure.
public func keychainMessage(_ error: KeyChainStoreError) -> String {
    switch error {
    case .stringEncodingFailed, .stringDecodingFailed:
        return "bad token"
    case .unexpectedStatus(let status):
        return "keychain \(status)"
    }
}

/// The default auth service's store.
public func defaultStore() -> any KeyChainStoreProtocol {
    return SystemKeyChainAuthService().keyChainStore
}
