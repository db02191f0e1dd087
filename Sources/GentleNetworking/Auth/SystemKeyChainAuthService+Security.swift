#if canImport(Security)
    import Foundation
    import Security

    /// Keychain access for ``SystemKeyChainAuthService`` on Apple platforms: one generic
    /// password per service and account, accessible after first unlock.
    enum KeychainStore {
        private static func baseQuery(service: String, account: String) -> [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
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
            let base = baseQuery(service: service, account: account)
            let attributes: [String: Any] = [
                kSecValueData as String: Data(token.utf8),
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
            ]
            var status = SecItemUpdate(base as CFDictionary, attributes as CFDictionary)
            if status == errSecItemNotFound {
                status = SecItemAdd(base.merging(attributes) { $1 } as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw failure(status, "save") }
        }

        static func delete(service: String, account: String) throws {
            let status = SecItemDelete(baseQuery(service: service, account: account) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw failure(status, "delete") }
        }

        private static func failure(_ status: OSStatus, _ operation: String) -> CredentialStoreError {
            CredentialStoreError(
                .keychainFailure(status), message: "Keychain \(operation) failed with status \(status).")
        }
    }
#endif
