/// Why a streamed body could not be read as lines, Server-Sent Events or JSON Lines.
///
/// Transport failures (a dropped connection, a timeout) stay ``TransportError``s and HTTP
/// statuses ``NetworkError``s; this type covers what the body's bytes say, and one misuse of a
/// stream (``concurrentRead``).
public enum StreamingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A line grew past `limit` bytes without ending. Nothing beyond the limit is buffered.
    case lineTooLong(limit: Int)
    /// One Server-Sent Event's data grew past `limit` bytes before its blank line.
    case eventTooLarge(limit: Int)
    /// Line `line` (1-based) is not valid UTF-8.
    case invalidUTF8(line: Int)
    /// The body ended in the middle of a Server-Sent Event (fields after the last blank line, or
    /// a last line without its line ending, which is never applied), which the event-stream
    /// format says must not be dispatched.
    case incompleteEvent
    /// Line `line` (1-based) of a JSON Lines body did not decode; `message` names the type, the
    /// coding path and the decoder's reason (see ``JSONLinesDecoder``: never the whole line, but
    /// the reason can quote one of its values, cut and scrubbed).
    case undecodableLine(line: Int, message: String)
    /// A task asked for the next chunk of a stream while another task was waiting for one: a
    /// stream is read by one task at a time. The second reader gets this at once; when its loop
    /// then ends, the stream stops (as when any reader leaves early), and the first reader gets
    /// `CancellationError`. Before, the second replaced the first, which waited forever.
    case concurrentRead

    /// One sentence saying what went wrong, quoting nothing from the body.
    public var description: String {
        switch self {
        case .lineTooLong(let limit): "A line of the stream exceeds the limit of \(limit) bytes."
        case .eventTooLarge(let limit): "An event of the stream exceeds the limit of \(limit) bytes."
        case .invalidUTF8(let line): "Line \(line) of the stream is not valid UTF-8."
        case .incompleteEvent: "The stream ended in the middle of an event."
        case .undecodableLine(let line, let message): "Line \(line) of the stream does not decode: \(message)"
        case .concurrentRead: "The stream is being read by another task; read it from one task at a time."
        }
    }
}

extension StreamingError: LocalizedError {
    /// The same text as ``description``: what `localizedDescription` shows (an alert, a log line),
    /// free of credentials, instead of Foundation's generic "The operation could not be completed".
    public var errorDescription: String? { description }
}
