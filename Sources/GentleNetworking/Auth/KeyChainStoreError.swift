/// Why a ``SystemKeyChainStore`` could not use the platform Keychain.
///
/// Errors of the Linux credentials file (permissions, a corrupt file, no config directory) are
/// ``CredentialStoreError``s, which say more than these cases can.
public enum KeyChainStoreError: Error, Sendable, Hashable {
    /// The value could not be turned into bytes. Kept for source compatibility: a Swift `String`
    /// always has a UTF-8 form, so the stores in this library never throw it.
    case stringEncodingFailed
    /// The stored item is not UTF-8 text.
    case stringDecodingFailed
    /// The Keychain returned this status (an `OSStatus`, which is an `Int32`), such as -34018
    /// (`errSecMissingEntitlement`) for an unsigned macOS command-line tool.
    case unexpectedStatus(Int32)
}
