import Foundation

/// A request body: `Data` as it is, or any `Encodable` type that declares the conformance
/// (it is encoded with the encoder for the request's ``RequestContentType``).
public protocol BodyBuilder: Sendable {
    /// The body bytes.
    ///
    /// - Parameter encoder: The encoder for the request's content type, or `nil` when that type
    ///   has none (`.none`, `.binary`).
    /// - Throws: ``NetworkError/noEncoder`` when an encoder is needed and there is none, or the
    ///   encoder's error.
    func body(encoder: DataEncoder?) throws -> Data
}

extension Data: BodyBuilder {
    /// The data itself when there is no encoder (`.binary`, `.none`); otherwise the data encoded
    /// by `encoder` (for JSON, a base64 string, as `JSONEncoder` encodes `Data`).
    public func body(encoder: DataEncoder?) throws -> Data {
        guard let encoder else { return self }
        return try encoder.encode(self)
    }
}

extension Encodable {
    /// `self` encoded by `encoder`.
    ///
    /// - Throws: ``NetworkError/noEncoder`` when `encoder` is `nil`.
    public func body(encoder: DataEncoder?) throws -> Data {
        guard let encoder else { throw NetworkError.noEncoder }
        return try encoder.encode(self)
    }
}
