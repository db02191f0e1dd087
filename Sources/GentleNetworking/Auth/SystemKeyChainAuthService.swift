import Foundation

/// The built-in auth service: keeps a bearer token in the platform's secure store.
///
/// - On Apple platforms it is a Keychain generic password in the data protection keychain
///   (also on macOS), `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: readable by background
///   work once the device was unlocked after a restart, never restored from a backup onto
///   another device, never synchronized (see `SystemKeyChainAuthService+Security.swift`). On
///   macOS this needs a keychain entitlement: an unsigned command-line tool gets
///   ``CredentialStoreError`` `.keychainFailure(-34018)` and should pass a ``FileCredentialStore``.
/// - On Linux it is a ``FileCredentialStore``: a mode-0600 file in a mode-0700 directory under
///   `$XDG_CONFIG_HOME` (or `~/.config`), written atomically, refused when its permissions are
///   too open. The token is cached in memory and the file re-read only when it changes (two
///   `lstat` calls per request; see ``FileCredentialStore``). The Keychain is read on every call.
///
/// ```swift
/// let keyChainAuthService = SystemKeyChainAuthService()
/// try await keyChainAuthService.saveAccessToken(token)
/// ```
public struct SystemKeyChainAuthService: AuthServiceProtocol {
    /// The store's service name; `"GentleNetworking"` by default.
    public let service: String
    /// The account the token is stored under; `"accessToken"` by default.
    public let account: String
    /// The file store in use, or `nil` when the platform Keychain is used.
    public let fileStore: FileCredentialStore?
    private let store: SystemKeyChainStore

    /// The ``SystemKeyChainStore`` holding the token: the same items as this service's, with
    /// ``service`` as its service and ``account`` as the key.
    public var keyChainStore: any KeyChainStoreProtocol { store }
    /// The key of the token in ``keyChainStore``: ``account``.
    public var keyChainKey: String { account }

    /// Creates the service for the platform's secure store.
    ///
    /// - Parameters:
    ///   - service: ``SystemKeyChainStore/defaultService`` by default: the bundle identifier,
    ///     else `"GentleNetworking"` on Apple platforms and `"GentleNetworking.<program name>"`
    ///     on Linux, where every program of a user shares one credentials file (one name for
    ///     all made each tool send the token another had saved to its own API).
    ///   - account: `"accessToken"` by default.
    public init(service: String = SystemKeyChainStore.defaultService, account: String = "accessToken") {
        self.init(service: service, account: account, store: SystemKeyChainStore(service: service))
    }

    /// Creates the service over an explicit credentials file store, on any platform.
    public init(
        service: String = SystemKeyChainStore.defaultService, account: String = "accessToken",
        fileStore: FileCredentialStore
    ) {
        self.init(
            service: service, account: account, store: SystemKeyChainStore(service: service, fileStore: fileStore))
    }

    private init(service: String, account: String, store: SystemKeyChainStore) {
        self.service = service
        self.account = account
        self.fileStore = store.fileStore
        self.store = store
    }

    /// The stored token, or `nil`.
    ///
    /// - Throws: ``CredentialStoreError`` when the store is unreadable, too open or corrupt.
    public func loadAccessToken() async throws -> String? {
        try store.load(account)
    }

    /// Stores `token`, replacing the previous one.
    ///
    /// - Throws: ``CredentialStoreError`` when the store cannot be written.
    public func saveAccessToken(_ token: String) async throws {
        try store.store(token, account)
    }

    /// Removes the token; a no-op when there is none.
    ///
    /// - Throws: ``CredentialStoreError`` when the store cannot be written.
    public func deleteAccessToken() async throws {
        try store.store(nil, account)
    }
}
