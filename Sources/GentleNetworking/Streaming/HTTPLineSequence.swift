import Foundation

extension HTTPByteStream {
    /// The body as UTF-8 lines (`\n`, `\r\n` or `\r` endings), each at most `maxLineBytes` bytes
    /// (1 MiB by default). A longer line or invalid UTF-8 throws a ``StreamingError`` and ends
    /// the transfer.
    public func lines(maxLineBytes: Int = LineSplitter.defaultMaxLineBytes) -> HTTPLineSequence {
        HTTPLineSequence(bytes: self, maxLineBytes: maxLineBytes)
    }
}

/// A body's lines, as they arrive; see ``HTTPByteStream/lines(maxLineBytes:)``.
public struct HTTPLineSequence: AsyncSequence, Sendable {
    /// A line, without its terminator.
    public typealias Element = String

    let bytes: HTTPByteStream
    let maxLineBytes: Int

    /// The iterator.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: LineReader

        /// The next line, or `nil` at the end of the body.
        ///
        /// - Throws: ``StreamingError``, or what the byte stream throws.
        public mutating func next() async throws -> String? {
            try await lines.next()
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lines: LineReader(bytes: bytes.makeAsyncIterator(), maxLineBytes: maxLineBytes))
    }
}

/// Lines from a byte iterator: the part the line, event and JSON Lines sequences share.
struct LineReader {
    private var bytes: HTTPByteStream.AsyncIterator
    private var splitter: LineSplitter
    private var ready: [String] = []
    private var readyIndex = 0
    private var ended = false

    init(bytes: HTTPByteStream.AsyncIterator, maxLineBytes: Int) {
        self.bytes = bytes
        self.splitter = LineSplitter(maxLineBytes: maxLineBytes)
    }

    /// The number of the line returned last (1-based).
    var lineNumber: Int { splitter.lineCount - (ready.count - readyIndex) }

    mutating func next() async throws -> String? {
        while true {
            if readyIndex < ready.count {
                defer { readyIndex += 1 }
                return ready[readyIndex]
            }
            if ended { return nil }
            ready = []
            readyIndex = 0
            do {
                if let chunk = try await bytes.next() {
                    ready = try splitter.push(chunk)
                } else {
                    ended = true
                    if let last = try splitter.finish() { ready = [last] }
                }
            } catch let error as StreamingError {
                stop()
                throw error
            }
        }
    }

    /// Ends the transfer.
    func stop() {
        bytes.stop()
    }
}
