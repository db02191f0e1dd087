import Foundation
import GentleNetworking

/// Encodes a body as `application/x-www-form-urlencoded`: `key=value` pairs sorted as text (as
/// Y-Network sorts them), joined by `&`, with spaces as `+` and everything but RFC 3986 unreserved characters percent-encoded.
///
/// The value is a ``ParametersBuilder`` (such as a ``Parameters`` dictionary) or any
/// `Encodable` whose JSON form is an object of scalars or arrays of scalars. `true` is sent as
/// a bare key, `false` and `nil` are left out, and an array repeats its key.
public struct FormURLEncoder: DataEncoder {
    /// Creates an encoder.
    public init() {}

    /// `value` as a form body.
    ///
    /// - Throws: ``NetworkError/serialization(_:)`` when `value` is not an object (a JSON array
    ///   or scalar has no keys to send).
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let parameters: [String: Any]
        if let builder = value as? ParametersBuilder {
            parameters = builder.parameters
        } else {
            let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value), options: [.fragmentsAllowed])
            guard let object = json as? [String: Any] else {
                throw NetworkError.serialization(
                    FormEncodingError(message: "A form body needs an object with keys, not \(type(of: json))."))
            }
            parameters = object
        }
        return Data(Self.encodeAny(parameters, spaceAsPlus: true).utf8)
    }

    /// `parameters` as sorted, percent-encoded `key=value` pairs joined by `&`.
    ///
    /// - Parameter spaceAsPlus: Whether spaces are written `+` (form bodies) or `%20`.
    public static func encode(_ parameters: Parameters, spaceAsPlus: Bool) -> String {
        encodeAny(parameters, spaceAsPlus: spaceAsPlus)
    }

    /// ``encode(_:spaceAsPlus:)`` for values of any type (such as a decoded JSON object).
    static func encodeAny(_ parameters: [String: Any], spaceAsPlus: Bool) -> String {
        // Each field's encoded text (`name=value`, a bare `name`, or an array's pairs in their
        // order), sorted as text, as Y-Network sorts its `field=value` strings: by key alone,
        // `a=1` would come before `a-b=2`, where Y-Network puts it after ("-" < "=").
        var fields: [String] = []
        for (key, value) in parameters {
            let name = component(key, spaceAsPlus: spaceAsPlus)
            let pairs = flatten(value).map { element in
                switch element {
                case .bare: name
                case .text(let text): name + "=" + component(text, spaceAsPlus: spaceAsPlus)
                }
            }
            if !pairs.isEmpty { fields.append(pairs.joined(separator: "&")) }
        }
        return fields.sorted().joined(separator: "&")
    }

    private enum Element {
        case bare
        case text(String)
    }

    private static func flatten(_ value: Any) -> [Element] {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return [] }
            return flatten(wrapped)
        }
        // Checked by dynamic type first: on Linux an integer NSNumber also casts to Bool.
        if type(of: value) == Bool.self, let flag = value as? Bool { return flag ? [.bare] : [] }
        if let number = value as? NSNumber, type(of: value) is NSNumber.Type {
            // JSONSerialization's booleans are NSNumbers whose Objective-C type is "c".
            if String(cString: number.objCType) == "c" { return number.boolValue ? [.bare] : [] }
            return [.text(number.stringValue)]
        }
        switch value {
        case let text as String: return [.text(text)]
        case is NSNull: return []
        case let array as [Any]: return array.flatMap(flatten)
        default: return [.text(ValueText.of(value))]
        }
    }

    private static func component(_ text: String, spaceAsPlus: Bool) -> String {
        PercentEncoding.formComponent(text, spaceAsPlus: spaceAsPlus)
    }
}

/// Why a value could not be form-encoded.
public struct FormEncodingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// The message.
    public var description: String { message }
}
