import Foundation

/// Decodes the lines of a JSON Lines (NDJSON) body, one `Element` per line: shared by every
/// transport and tested without I/O.
///
/// Blank lines (only spaces and tabs) are skipped, as NDJSON allows. A line that does not decode
/// is ``StreamingError/undecodableLine(line:message:)`` naming its 1-based number, the coding path
/// and the decoder's reason, as a ``DecodingFailure`` shows them: the reason can quote a value of
/// the line (an enum's invalid raw value), cut to 512 bytes, control characters escaped, and
/// withheld under a field named like a secret. Through ``HTTPNetworkService`` the request's
/// credentials are scrubbed from it too (a server echoing the caller's token into such a field).
public struct JSONLinesDecoder<Element: Decodable>: Sendable {
    private let decoder: JSONDecoder
    /// Credential values of the request the lines answer, scrubbed from the error's text.
    private let secrets: [String]

    /// Creates a decoder that uses `decoder` (a plain `JSONDecoder()` by default).
    public init(decoder: JSONDecoder = JSONDecoder()) {
        self.init(decoder: decoder, secrets: [])
    }

    /// A decoder whose errors are scrubbed of `secrets` (the request's credential values).
    init(decoder: JSONDecoder, secrets: [String]) {
        self.decoder = decoder
        self.secrets = secrets
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
                error, modelType: String(describing: Element.self), statusCode: 200, body: Data(), secrets: secrets)
            let path = failure.codingPath.isEmpty ? "" : " at \(failure.codingPath)"
            throw .undecodableLine(line: number, message: "\(failure.modelType)\(path): \(failure.reason)")
        }
    }
}
