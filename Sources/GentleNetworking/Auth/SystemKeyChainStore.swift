import Foundation

/// The platform's secure store for secrets, as a ``KeyChainStoreProtocol``: what
/// ``SystemKeyChainAuthService`` keeps its token in.
///
/// - On Apple platforms each key is a Keychain generic password whose service is ``service``
///   and whose account is the key, in the data protection keychain,
///   `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` (see ``SystemKeyChainAuthService``).
///   Keychain failures throw ``KeyChainStoreError``.
/// - On Linux (and with ``init(service:fileStore:)`` anywhere) each key is the entry
///   `"<service>/<key>"` of a ``FileCredentialStore`` (`%` and `/` in the service escaped as
///   `%25` and `%2F`, so no two pairs share an entry): a mode-0600 file in a mode-0700
///   directory, written atomically, refused when its permissions are too open. Its failures
///   throw ``CredentialStoreError``.
///
/// Immutable, so it is safe to share between tasks.
public final class SystemKeyChainStore: KeyChainStoreProtocol {
    /// The name that namespaces this store's items.
    public let service: String
    /// The file store in use, or `nil` when the platform Keychain is used.
    public let fileStore: FileCredentialStore?

    /// The service used when none is given: the main bundle's identifier; without one
    /// (command-line tools, Linux), `"GentleNetworking"` on Apple platforms (the Keychain keeps
    /// each program's items to itself) and `"GentleNetworking.<program name>"` elsewhere.
    ///
    /// On Linux every program of a user shares one credentials file: with one default name for
    /// all, a token one tool saved was the token every other such tool loaded, and sent to its
    /// own API. Programs that mean to share a token name the same service explicitly.
    public static var defaultService: String {
        if let identifier = Bundle.main.bundleIdentifier { return identifier }
        #if canImport(Security)
            return "GentleNetworking"
        #else
            return "GentleNetworking." + ProcessInfo.processInfo.processName
        #endif
    }

    /// Creates the store for the platform's secure store.
    ///
    /// - Parameter service: Namespaces the items; ``defaultService`` by default.
    public convenience init(service: String = SystemKeyChainStore.defaultService) {
        #if canImport(Security)
            self.init(service: service, optionalFileStore: nil)
        #else
            self.init(service: service, optionalFileStore: FileCredentialStore())
        #endif
    }

    /// Creates the store over an explicit credentials file, on any platform.
    public convenience init(service: String = SystemKeyChainStore.defaultService, fileStore: FileCredentialStore) {
        self.init(service: service, optionalFileStore: fileStore)
    }

    init(service: String, optionalFileStore: FileCredentialStore?) {
        self.service = service
        self.fileStore = optionalFileStore
    }

    /// Stores `value` under `key`, replacing the previous value.
    ///
    /// - Throws: ``KeyChainStoreError`` from the Keychain, ``CredentialStoreError`` from the file.
    public func save(_ value: String, forKey key: String) async throws {
        do { try store(value, key) } catch { throw Self.keyChainError(error) }
    }

    /// The value under `key`, or `nil`.
    ///
    /// - Throws: ``KeyChainStoreError`` from the Keychain, ``CredentialStoreError`` from the file.
    public func value(forKey key: String) async throws -> String? {
        do { return try load(key) } catch { throw Self.keyChainError(error) }
    }

    /// Removes the value under `key`; a no-op when there is none.
    ///
    /// - Throws: ``KeyChainStoreError`` from the Keychain, ``CredentialStoreError`` from the file.
    public func deleteValue(forKey key: String) async throws {
        do { try store(nil, key) } catch { throw Self.keyChainError(error) }
    }

    // MARK: Storage, with this library's errors (what SystemKeyChainAuthService throws)

    func load(_ key: String) throws -> String? {
        if let fileStore { return try fileStore.value(for: Self.entryName(service: service, key: key)) }
        #if canImport(Security)
            return try KeychainStore.load(service: service, account: key)
        #else
            return nil
        #endif
    }

    /// Stores `value`, or removes the key when it is `nil`.
    func store(_ value: String?, _ key: String) throws {
        if let fileStore { return try fileStore.setValue(value, for: Self.entryName(service: service, key: key)) }
        #if canImport(Security)
            if let value {
                try KeychainStore.save(value, service: service, account: key)
            } else {
                try KeychainStore.delete(service: service, account: key)
            }
        #endif
    }

    /// The file entry of `key` in `service`: `"<service>/<key>"`, with `%` and `/` in the service
    /// escaped (`%25`, `%2F`), so that no two pairs share an entry. Unescaped, the service
    /// `"com.example.app/prod"` with the key `"accessToken"` and the service
    /// `"com.example.app"` with the key `"prod/accessToken"` read and wrote one token: one
    /// identity's token was sent as another's. A service with neither character (a bundle
    /// identifier, the default) names its entries as before.
    static func entryName(service: String, key: String) -> String {
        guard service.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "%") }) else {
            return service + "/" + key
        }
        let escaped = service.replacingOccurrences(of: "%", with: "%25", options: .literal).replacingOccurrences(
            of: "/", with: "%2F", options: .literal)
        return escaped + "/" + key
    }

    /// A Keychain failure as the seed's ``KeyChainStoreError``; file-store errors unchanged.
    static func keyChainError(_ error: any Error) -> any Error {
        guard let error = error as? CredentialStoreError, error.path == nil else { return error }
        switch error.code {
        case .keychainFailure(let status): return KeyChainStoreError.unexpectedStatus(status)
        case .corruptFile: return KeyChainStoreError.stringDecodingFailed
        default: return error
        }
    }
}
