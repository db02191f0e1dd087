import Foundation

/// One HTTP header as a `(field, value)` pair.
public typealias HttpHeader = (field: String, value: String)

/// HTTP headers by name.
public typealias HttpHeaders = [String: String]

/// Query or form parameters by name. Values are strings, numbers or booleans (`true` is sent
/// as a bare key, `false` is left out), optionals (`nil` is left out) or arrays of those (the
/// key is repeated); anything else is sent as its description.
///
/// The values are `any Sendable` (Y-Network's are `Any`) so that a request holding parameters
/// can be `Sendable` in Swift 6. Literals, and values of any `Sendable` type, convert as before:
/// `let parameters: Parameters = ["page": 2, "q": "swift"]`.
public typealias Parameters = [String: any Sendable]

/// A source of query or form parameters; a ``Parameters`` dictionary is one.
///
/// `Sendable`, so a request type can store one and still be `Sendable`.
public protocol ParametersBuilder: Sendable {
    /// The parameters.
    var parameters: Parameters { get }
}

extension Dictionary: ParametersBuilder where Key == String, Value == any Sendable {
    /// The dictionary itself.
    public var parameters: Parameters { self }
}
