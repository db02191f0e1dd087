/// Why a credential store could not read or write a token.
public struct CredentialStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The category of a ``CredentialStoreError``.
    public enum Code: Sendable, Hashable {
        /// The file or its directory is readable or writable by other users; like ssh, the store
        /// refuses to use it. Fix with `chmod 600` on the file and `chmod 700` on the directory.
        case insecurePermissions
        /// The file exists but is not a credentials file this store wrote. It is left untouched.
        case corruptFile
        /// No config directory could be found (`$XDG_CONFIG_HOME` and `$HOME` are both unset).
        case noConfigDirectory
        /// A file-system call failed; ``CredentialStoreError/message`` has the `errno` text.
        case ioFailure
        /// The platform keychain returned an error status.
        case keychainFailure(Int32)
        /// An ``AuthServiceProtocol`` conformer declares no ``AuthServiceProtocol/keyChainStore``
        /// and does not implement the token methods either, so there is nowhere to keep a token.
        case storeNotConfigured
    }

    /// What went wrong.
    public let code: Code
    /// The path involved, when there is one.
    public let path: String?
    /// A human-readable explanation.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, path: String? = nil, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    /// The code, message and path.
    public var description: String {
        "CredentialStoreError.\(code): \(message)" + (path.map { " [\($0)]" } ?? "")
    }
}

extension CredentialStoreError: LocalizedError {
    /// The same text as ``message``: what `localizedDescription` shows (an alert, a log line),
    /// free of credentials, instead of Foundation's generic "The operation could not be completed".
    public var errorDescription: String? { message }
}
