#if canImport(Security)
    import Foundation
    import Security

    /// Keychain access for ``SystemKeyChainAuthService`` on Apple platforms: one generic
    /// password per service and account.
    ///
    /// - **The data protection keychain on macOS** (`kSecUseDataProtectionKeychain` = `true`,
    ///   macOS 10.15+, so always available at our macOS 12 minimum): items behave as on iOS,
    ///   protected by the class below instead of the login keychain's access lists. Other
    ///   platforms always use it and ignore the key.
    /// - **`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`**: readable once the device has
    ///   been unlocked after a restart, so background work (a background transfer, a refresh
    ///   while the screen is locked) can still authorize; `WhenUnlocked` would make those fail
    ///   with `errSecInteractionNotAllowed`. *ThisDeviceOnly*: the token is never restored from a
    ///   backup onto another device and never synchronized through iCloud Keychain.
    ///
    /// On macOS the data protection keychain needs the program to be signed with a keychain
    /// entitlement (an app's application identifier does it); an unsigned or ad-hoc-signed
    /// command-line tool gets `errSecMissingEntitlement` (-34018), thrown as
    /// ``CredentialStoreError`` `.keychainFailure(-34018)`. Such tools use
    /// ``SystemKeyChainAuthService/init(service:account:fileStore:)`` instead.
    ///
    /// Every save sets the accessibility class again, so an item written by an earlier version
    /// (`AfterFirstUnlock`, which travels in backups) is moved to this class on the next save.
    /// On macOS, an item an earlier version wrote to the file-based keychain is not read (that
    /// could prompt the user); a delete removes it too.
    enum KeychainStore {
        /// The item, in the data protection keychain.
        private static func baseQuery(service: String, account: String) -> [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        static func load(service: String, account: String) throws -> String? {
            var query = baseQuery(service: service, account: account)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess else { throw failure(status, "read") }
            guard let data = item as? Data, let token = String(data: data, encoding: .utf8) else {
                throw CredentialStoreError(.corruptFile, message: "The Keychain item is not UTF-8 text.")
            }
            return token
        }

        static func save(_ token: String, service: String, account: String) throws {
            let query = baseQuery(service: service, account: account)
            let attributes: [String: Any] = [
                kSecValueData as String: Data(token.utf8),
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
            if status == errSecItemNotFound {
                status = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
                if status == errSecDuplicateItem {
                    // Another save added it between our update and add: update that one.
                    status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
                }
            }
            guard status == errSecSuccess else { throw failure(status, "save") }
        }

        static func delete(service: String, account: String) throws {
            let query = baseQuery(service: service, account: account)
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw failure(status, "delete") }
            // macOS: an earlier version's item in the file-based keychain (elsewhere this query is
            // the same item again, already gone). Best effort: it may not exist or be ours to delete.
            var legacy = query
            legacy.removeValue(forKey: kSecUseDataProtectionKeychain as String)
            _ = SecItemDelete(legacy as CFDictionary)
        }

        private static func failure(_ status: OSStatus, _ operation: String) -> CredentialStoreError {
            CredentialStoreError(
                .keychainFailure(status), message: "Keychain \(operation) failed with status \(status).")
        }
    }
#endif
