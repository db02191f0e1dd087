import Foundation

/// Encodes request bodies; `JSONEncoder` and ``FormURLEncoder`` are ones.
public protocol DataEncoder: Sendable {
    /// `value` as body bytes.
    func encode<T: Encodable>(_ value: T) throws -> Data
}

/// Decodes response bodies; `JSONDecoder` is one.
public protocol DataDecoder: Sendable {
    /// A `T` from `data`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONEncoder: DataEncoder {}
extension JSONDecoder: DataDecoder {}

/// Chooses the encoder for a request's content type and the decoder for a response's.
public protocol DataParserFactory: Sendable {
    /// The decoder for `contentType`, or `nil` when that type is not decoded.
    func decoder(for contentType: ResponseContentType) -> DataDecoder?
    /// The encoder for `contentType`, or `nil` when that type is not encoded.
    func encoder(for contentType: RequestContentType) -> DataEncoder?
}

/// The default parser factory: JSON both ways, and form-URL encoding for `.formURLEncoded`.
///
/// - Decoders: `.JSON` → the JSON decoder; `.none` and `.binary` → `nil`.
/// - Encoders: `.JSON` and `.multipart` → the JSON encoder; `.formURLEncoded` →
///   ``FormURLEncoder``; `.none` and `.binary` → `nil` (a `Data` body is sent as it is).
public struct JSONDataParserFactory: DataParserFactory {
    /// The decoder for JSON responses.
    public let decoder: JSONDecoder
    /// The encoder for JSON bodies.
    public let encoder: JSONEncoder

    /// Creates a factory with the given coders.
    public init(decoder: JSONDecoder, encoder: JSONEncoder) {
        self.decoder = decoder
        self.encoder = encoder
    }

    /// Creates a factory with `JSONDecoder.defaultDecoder` (a plain decoder unless replaced)
    /// and `JSONEncoder.defaultEncoder` (pretty-printed output), as in Y-Network.
    public init() {
        self.init(decoder: JSONDecoder.defaultDecoder, encoder: JSONEncoder.defaultEncoder)
    }

    /// The JSON decoder for `.JSON`; `nil` otherwise.
    public func decoder(for contentType: ResponseContentType) -> DataDecoder? {
        contentType == .JSON ? decoder : nil
    }

    /// The JSON encoder for `.JSON` and `.multipart`, ``FormURLEncoder`` for `.formURLEncoded`,
    /// `nil` otherwise.
    public func encoder(for contentType: RequestContentType) -> DataEncoder? {
        switch contentType {
        case .JSON, .multipart: encoder
        case .formURLEncoded: FormURLEncoder()
        case .none, .binary: nil
        }
    }
}
