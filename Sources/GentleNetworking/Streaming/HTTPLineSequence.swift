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
    /// What is left of the chunk being split: lines are taken from it ``linesPerBatch`` at a time.
    private var unsplit: Data.Iterator?
    private var ended = false

    /// The most lines split ahead of the consumer: memory for lines stays bounded however many
    /// a chunk holds (a chunk of line endings made a million strings at once).
    static let linesPerBatch = 256
    /// Whether the line returned last had no end of line: the body ended in the middle of it.
    /// Lines and JSON Lines take it as the last line; Server-Sent Events do not (WHATWG: a line
    /// is what a line ending ends).
    private(set) var returnedUnterminatedLine = false

    /// `replacingInvalidUTF8`: see ``LineSplitter/init(maxLineBytes:replacingInvalidUTF8:)``.
    init(bytes: HTTPByteStream.AsyncIterator, maxLineBytes: Int, replacingInvalidUTF8: Bool = false) {
        self.bytes = bytes
        self.splitter = LineSplitter(maxLineBytes: maxLineBytes, replacingInvalidUTF8: replacingInvalidUTF8)
    }

    /// The number of the line returned last (1-based).
    var lineNumber: Int { splitter.lineCount - (ready.count - readyIndex) }

    /// Lines split and not returned yet (for tests): at most ``linesPerBatch``.
    var linesAhead: Int { ready.count - readyIndex }

    /// The next line; `nil` at the end of the body, and after a failure has been thrown.
    ///
    /// - A fault in the bytes (a line too long, invalid UTF-8) is thrown as soon as the lines
    ///   before it are taken, without waiting for more bytes (a server that stalls after it
    ///   would otherwise turn it into a timeout), and the transfer is ended.
    /// - After the byte stream throws, the unfinished line is dropped, never returned as if it
    ///   were whole (a number cut short, `123` of `123456`, would decode).
    mutating func next() async throws -> String? {
        while true {
            if readyIndex < ready.count {
                defer { readyIndex += 1 }
                return ready[readyIndex]
            }
            if ended { return nil }
            ready = []
            readyIndex = 0
            if let fault = splitter.heldFault {
                ended = true
                stop()
                throw fault
            }
            do {
                if var rest = unsplit {
                    ready = try splitter.push(from: &rest, maxLines: Self.linesPerBatch)
                    // Fewer lines than asked for: the chunk is used up (or a fault is held).
                    unsplit = ready.count < Self.linesPerBatch ? nil : rest
                } else if let chunk = try await bytes.next() {
                    unsplit = chunk.makeIterator()
                } else {
                    ended = true
                    if let last = try splitter.finish() {
                        ready = [last]
                        returnedUnterminatedLine = true
                    }
                }
            } catch let error as StreamingError {
                ended = true
                unsplit = nil
                stop()
                throw error
            } catch {
                ended = true
                throw error
            }
        }
    }

    /// Ends the transfer.
    func stop() {
        bytes.stop()
    }
}
