import Foundation

extension HTTPByteStream {
    /// The body as Server-Sent Events (`text/event-stream`, WHATWG HTML): see
    /// ``ServerSentEventParser`` for the rules. Lines are limited to `maxLineBytes` (1 MiB by
    /// default) and each event's data to `maxEventBytes` (8 MiB by default); past either, or
    /// when the body ends mid-event, it throws a ``StreamingError`` and ends the transfer. Bytes
    /// that are not UTF-8 are decoded as U+FFFD, as WHATWG decodes an event stream (a stray
    /// Latin-1 byte in a comment ended a feed for good).
    ///
    /// `lastEventID` is the event ID already in force (the one sent as `Last-Event-ID` when
    /// resuming): events before the body's first `id:` carry it, as an `EventSource`'s
    /// `lastEventId` would. `nil` by default.
    public func serverSentEvents(
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes,
        maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes,
        lastEventID: String? = nil
    ) -> ServerSentEventSequence {
        ServerSentEventSequence(
            bytes: self, maxLineBytes: maxLineBytes, maxEventBytes: maxEventBytes, lastEventID: lastEventID)
    }
}

/// A body's Server-Sent Events, as they arrive; see
/// ``HTTPByteStream/serverSentEvents(maxLineBytes:maxEventBytes:lastEventID:)``.
public struct ServerSentEventSequence: AsyncSequence, Sendable {
    /// An event, dispatched.
    public typealias Element = ServerSentEvent

    let bytes: HTTPByteStream
    let maxLineBytes: Int
    let maxEventBytes: Int
    let lastEventID: String?

    /// The iterator.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: LineReader
        var parser: ServerSentEventParser
        /// Set once an event was refused: the iteration is over (the half-built event and the
        /// lines already read after it are never handed out).
        var ended = false

        /// The last event ID the stream set so far (for `Last-Event-ID` when reconnecting).
        public var lastEventID: String? { parser.lastEventID }
        /// The reconnection time the stream set so far, in milliseconds.
        public var reconnectionTime: Int? { parser.reconnectionTime }

        /// The next event, or `nil` at the end of the body.
        ///
        /// After it throws, the iteration is over: every later call returns `nil`, as the
        /// standard library's throwing sequences do (never the rest of a refused event).
        ///
        /// - Throws: ``StreamingError``, or what the byte stream throws.
        public mutating func next() async throws -> ServerSentEvent? {
            if ended { return nil }
            do {
                while let line = try await lines.next() {
                    if lines.returnedUnterminatedLine {
                        // The body ended in the middle of a line: not a line, never applied (a
                        // `retry: 6` cut from `retry: 60000` set a 6 ms reconnection time). A
                        // comment cut short changes nothing; a field cut short is an event cut
                        // short.
                        if line.utf8.first == UInt8(ascii: ":") { break }
                        throw StreamingError.incompleteEvent
                    }
                    if let event = try parser.consume(line: line) { return event }
                }
                ended = true
                try parser.finish()
                return nil
            } catch {
                // A refused line or event, a fault of the body, or one cut mid-event: over.
                ended = true
                lines.stop()
                throw error
            }
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            lines: LineReader(bytes: bytes.makeAsyncIterator(), maxLineBytes: maxLineBytes, replacingInvalidUTF8: true),
            parser: ServerSentEventParser(maxEventBytes: maxEventBytes, lastEventID: lastEventID))
    }
}
