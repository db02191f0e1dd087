import Foundation
import GentleNetworking

/// How a request body is encoded, which also sets its `Content-Type`; `.JSON` by default.
public enum RequestContentType: Sendable, Equatable {
    /// No body type: no `Content-Type` is sent.
    case none
    /// `application/json`, encoded by the parser factory's JSON encoder.
    case JSON
    /// Raw bytes (`Data` bodies are sent as they are); no `Content-Type` is sent.
    case binary
    /// `application/x-www-form-urlencoded; charset=utf-8`: sorted `key=value` pairs.
    case formURLEncoded
    /// `multipart/form-data` with the given boundary.
    case multipart(boundary: String)

    /// The header name this type sets: `Content-Type`.
    public static let field = "Content-Type"

    /// The `Content-Type` value, or `nil` for `.none` and `.binary`.
    public var value: String? {
        switch self {
        case .none, .binary: nil
        case .JSON: "application/json"
        case .formURLEncoded: "application/x-www-form-urlencoded; charset=utf-8"
        case .multipart(let boundary): "multipart/form-data; boundary=\(Self.parameterValue(boundary))"
        }
    }

    /// `value` as a header parameter: as it is when it is an HTTP token, else in quotes (a
    /// boundary may hold a space, `(`, `,`, `/`, `:`, `=` or `?`, which end or break an
    /// unquoted parameter: `a b` would be read as the boundary `a`). `"` and `\` are escaped.
    static func parameterValue(_ value: String) -> String {
        let isToken = !value.isEmpty && value.utf8.allSatisfy { RequestValidator.isTokenByte($0) }
        if isToken { return value }
        return "\""
            + value.replacingOccurrences(of: "\\", with: "\\\\", options: .literal).replacingOccurrences(
                of: "\"", with: "\\\"", options: .literal)
            + "\""
    }

    /// The header as a `(field, value)` pair, or `nil` when there is no value.
    public var header: HttpHeader? {
        value.map { (field: Self.field, value: $0) }
    }
}
