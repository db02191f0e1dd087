import Foundation

/// Decodes the lines of a JSON Lines (NDJSON) body, one `Element` per line: shared by every
/// transport and tested without I/O.
///
/// Blank lines (only spaces and tabs) are skipped, as NDJSON allows. A line that does not decode
/// is ``StreamingError/undecodableLine(line:message:)`` naming its 1-based number, the coding path
/// and the decoder's reason, never the line's text.
public struct JSONLinesDecoder<Element: Decodable>: Sendable {
    private let decoder: JSONDecoder

    /// Creates a decoder that uses `decoder` (a plain `JSONDecoder()` by default).
    public init(decoder: JSONDecoder = JSONDecoder()) {
        self.decoder = decoder
    }

    /// The element on `line` (number `number`, 1-based), or `nil` for a blank line.
    ///
    /// - Throws: ``StreamingError/undecodableLine(line:message:)``.
    public func decode(_ line: String, number: Int) throws(StreamingError) -> Element? {
        if line.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        do {
            return try decoder.decode(Element.self, from: Data(line.utf8))
        } catch {
            let failure = DecodingFailure.from(
                error, modelType: String(describing: Element.self), statusCode: 200, body: Data())
            let path = failure.codingPath.isEmpty ? "" : " at \(failure.codingPath)"
            throw .undecodableLine(line: number, message: "\(failure.modelType)\(path): \(failure.reason)")
        }
    }
}
