import Foundation

/// How a response body is parsed; `.JSON` by default. As in Y-Network, it does not set the
/// `Accept` header by itself: ``header`` is the usual one, for requests that want it.
///
/// - `.none`: the body is ignored and the result is ``EmptyNetworkResponse``.
/// - `.JSON`: decoded by the parser factory's decoder; an empty body is ``NetworkError/noData``.
/// - `.binary`: the body is returned as `Data`.
public enum ResponseContentType: Sendable, Equatable, CaseIterable {
    /// Nothing to parse.
    case none
    /// JSON (`Accept: application/json`).
    case JSON
    /// Raw bytes.
    case binary

    /// The header name of ``header``: `Accept`.
    public static let field = "Accept"

    /// The `Accept` value: `application/json` for `.JSON`, otherwise `nil`.
    public var value: String? {
        self == .JSON ? "application/json" : nil
    }

    /// The header as a `(field, value)` pair, or `nil` when there is no value.
    public var header: HttpHeader? {
        value.map { (field: Self.field, value: $0) }
    }
}
