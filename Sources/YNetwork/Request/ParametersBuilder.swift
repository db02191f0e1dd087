import Foundation

/// One HTTP header as a `(field, value)` pair.
public typealias HttpHeader = (field: String, value: String)

/// HTTP headers by name.
public typealias HttpHeaders = [String: String]

/// Query or form parameters by name. Values are strings, numbers or booleans (`true` is sent
/// as a bare key, `false` is left out); anything else is sent as its description.
public typealias Parameters = [String: Any]

/// A source of query or form parameters; a ``Parameters`` dictionary is one.
public protocol ParametersBuilder {
    /// The parameters.
    var parameters: Parameters { get }
}

extension Dictionary: ParametersBuilder where Key == String, Value == Any {
    /// The dictionary itself.
    public var parameters: Parameters { self }
}
