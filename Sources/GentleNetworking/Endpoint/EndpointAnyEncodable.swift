import Foundation

/// A type-erased `Encodable` value, used for the values of an endpoint's JSON body.
///
/// Wrap any `Encodable & Sendable` value: `EndpointAnyEncodable("alice")`,
/// `EndpointAnyEncodable(42)`, `EndpointAnyEncodable(myStruct)`. The wrapped value is encoded
/// exactly as it would be on its own, with the service's `JSONEncoder`.
public struct EndpointAnyEncodable: Encodable, Sendable {
    private let encodeValue: @Sendable (any Encoder) throws -> Void

    /// Wraps `value` for encoding.
    public init<T: Encodable & Sendable>(_ value: T) {
        self.encodeValue = { encoder in
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    /// Encodes the wrapped value into `encoder`.
    public func encode(to encoder: any Encoder) throws {
        try encodeValue(encoder)
    }
}
