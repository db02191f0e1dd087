import Foundation

extension HTTPByteStream {
    /// The body as JSON Lines (NDJSON), one `Element` per line, decoded with `decoder`; blank
    /// lines are skipped. A line that does not decode throws
    /// ``StreamingError/undecodableLine(line:message:)`` naming its number, and ends the transfer.
    public func jsonLines<Element: Decodable>(
        of type: Element.Type, decoder: JSONDecoder = JSONDecoder(),
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes
    ) -> JSONLinesSequence<Element> {
        JSONLinesSequence(bytes: self, decoder: JSONLinesDecoder(decoder: decoder), maxLineBytes: maxLineBytes)
    }
}

/// A body's JSON Lines, decoded as they arrive; see
/// ``HTTPByteStream/jsonLines(of:decoder:maxLineBytes:)``.
public struct JSONLinesSequence<Element: Decodable>: AsyncSequence, Sendable {
    let bytes: HTTPByteStream
    let decoder: JSONLinesDecoder<Element>
    let maxLineBytes: Int

    /// The iterator.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: LineReader
        let decoder: JSONLinesDecoder<Element>
        /// Set once a line was refused: the iteration is over.
        var ended = false

        /// The next element, or `nil` at the end of the body.
        ///
        /// After it throws, the iteration is over: every later call returns `nil`, as the
        /// standard library's throwing sequences do (the transfer was stopped, so the lines
        /// after the refused one would be a body cut short without a word).
        ///
        /// - Throws: ``StreamingError``, or what the byte stream throws.
        public mutating func next() async throws -> Element? {
            if ended { return nil }
            while let line = try await lines.next() {
                do {
                    if let element = try decoder.decode(line, number: lines.lineNumber) { return element }
                } catch {
                    ended = true
                    lines.stop()
                    throw error
                }
            }
            return nil
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            lines: LineReader(bytes: bytes.makeAsyncIterator(), maxLineBytes: maxLineBytes), decoder: decoder)
    }
}
