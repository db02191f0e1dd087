import Foundation

/// Anything that can stand for a URL path or base path: a `String`, or an enum of paths.
///
/// `String` and every `RawRepresentable` whose raw value is a `String` already conform (declare
/// the conformance on your enum; the `pathValue` comes for free).
public protocol PathRepresentable: Sendable {
    /// The path, or the absolute URL, as text.
    var pathValue: String { get }
}

extension String: PathRepresentable {
    /// The string itself.
    public var pathValue: String { self }
}

extension RawRepresentable where RawValue == String {
    /// The raw value.
    public var pathValue: String { rawValue }
}
