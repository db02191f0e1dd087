import Foundation

extension Error {
    /// The error's code as an `NSError` reports it (for a Swift enum, its case index unless it
    /// conforms to `CustomNSError`).
    ///
    /// A type's own `code` member (such as `URLError.code`) takes precedence where the static
    /// type is known; this one applies to `any Error`.
    public var code: Int { (self as NSError).code }

    /// The error's domain as an `NSError` reports it (for a Swift error, its type name unless
    /// it conforms to `CustomNSError`).
    public var domain: String { (self as NSError).domain }

    /// The error's user info as an `NSError` reports it; empty for most Swift errors.
    public var userInfo: [String: Any] { (self as NSError).userInfo }
}
