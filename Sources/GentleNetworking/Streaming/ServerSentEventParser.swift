/// Interprets the lines of a `text/event-stream` body as the WHATWG HTML specification says: a
/// plain value (lines in, events out), shared by every transport and tested without I/O.
///
/// - A leading byte order mark is ignored; lines starting with `:` are comments.
/// - `field: value` (one space after the colon is dropped), or a whole line as a field with an
///   empty value. Fields are matched by their bytes, so a combining mark after the colon or the
///   space stays in the value. `event` sets the type, `data` appends a line, `id` sets the
///   last event ID buffer (unless it contains NUL or is longer than ``maxEventIDBytes``), `retry` sets the reconnection time (ASCII
///   digits only; huge values saturate, never trap). Other fields are ignored.
/// - A blank line makes the buffered ID the last event ID (even when no event is dispatched),
///   then dispatches the event, unless no `data` was given. An `id` in a block that never ends
///   (the stream breaks first) does not count: reconnecting asks for what came after the last
///   complete block. The last event ID and the reconnection time persist across events.
/// - One event's data may be at most ``maxEventBytes`` bytes:
///   ``StreamingError/eventTooLarge(limit:)`` beyond.
public struct ServerSentEventParser: Sendable {
    /// The largest event data accepted, in bytes.
    public let maxEventBytes: Int
    /// 8 MiB.
    public static let defaultMaxEventBytes = 8 << 20
    /// The longest `id` kept, in bytes: 4 KiB. A longer one is ignored, like one with NUL (the
    /// last event ID stays what it was): sent back as `Last-Event-ID`, a 300 KB one made every
    /// reconnect's request too large to send (`.invalidRequest`), and a caller resuming from the
    /// saved ID failed the same way on every connect. Servers refuse header lines far shorter
    /// (nginx at 8 KiB).
    public static let maxEventIDBytes = 4 << 10

    private var sawFirstLine = false
    private var eventType = ""
    private var data = ""
    private var hasData = false
    private var blockRetry: Int?
    /// Whether any field arrived since the last blank line.
    private var inEvent = false

    /// The last event ID as of the last blank line (`nil` until a block with an `id` ended),
    /// sent back as `Last-Event-ID` when reconnecting.
    public private(set) var lastEventID: String?
    /// The `id` of the block being read, made ``lastEventID`` by the blank line that ends it.
    private var idBuffer: String?
    /// The reconnection time in milliseconds set by the stream's latest `retry:` field.
    public private(set) var reconnectionTime: Int?

    /// Creates a parser; `maxEventBytes` below 1 counts as 1.
    public init(maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes, lastEventID: String? = nil) {
        self.maxEventBytes = max(1, maxEventBytes)
        self.lastEventID = lastEventID
        self.idBuffer = lastEventID
    }

    /// Consumes one line (without its terminator) and returns the event it dispatches, if any.
    ///
    /// - Throws: ``StreamingError/eventTooLarge(limit:)``.
    public mutating func consume(line rawLine: String) throws(StreamingError) -> ServerSentEvent? {
        // By bytes and scalars, never by `Character`: a combining mark after `:` or the space
        // would join them into one grapheme and hide them.
        var line = Substring(rawLine)
        if !sawFirstLine {
            sawFirstLine = true
            if line.unicodeScalars.first == "\u{FEFF}" { line = Substring(line.unicodeScalars.dropFirst()) }
        }
        if line.isEmpty { return dispatch() }
        if line.utf8.first == UInt8(ascii: ":") { return nil }
        inEvent = true
        let field: Substring
        var value: Substring
        if let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[line.utf8.index(after: colon)...]
            if value.utf8.first == UInt8(ascii: " ") { value = value[value.utf8.index(after: value.startIndex)...] }
        } else {
            field = line
            value = ""
        }
        switch Field(field) {
        case .event:
            eventType = String(value)
        case .data:
            if hasData {
                guard data.utf8.count + 1 + value.utf8.count <= maxEventBytes else {
                    throw .eventTooLarge(limit: maxEventBytes)
                }
                data += "\n"
            } else {
                guard value.utf8.count <= maxEventBytes else { throw .eventTooLarge(limit: maxEventBytes) }
            }
            data += value
            hasData = true
        case .id:
            if value.utf8.count <= Self.maxEventIDBytes, !value.utf8.contains(0) { idBuffer = String(value) }
        case .retry:
            if let milliseconds = Self.milliseconds(value) {
                reconnectionTime = milliseconds
                blockRetry = milliseconds
            }
        case nil:
            break
        }
        return nil
    }

    /// The fields the format defines, matched byte for byte.
    private enum Field {
        case event, data, id, retry

        init?(_ name: Substring) {
            if name.utf8.elementsEqual("data".utf8) {
                self = .data
            } else if name.utf8.elementsEqual("id".utf8) {
                self = .id
            } else if name.utf8.elementsEqual("event".utf8) {
                self = .event
            } else if name.utf8.elementsEqual("retry".utf8) {
                self = .retry
            } else {
                return nil
            }
        }
    }

    /// Ends the stream.
    ///
    /// - Throws: ``StreamingError/incompleteEvent`` when fields arrived after the last blank line
    ///   (the format says such an event is not dispatched; a client reconnects).
    public mutating func finish() throws(StreamingError) {
        if inEvent {
            reset()
            idBuffer = lastEventID
            throw .incompleteEvent
        }
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer { reset() }
        lastEventID = idBuffer
        guard hasData else { return nil }
        return ServerSentEvent(
            event: eventType.isEmpty ? "message" : eventType, data: data, id: lastEventID, retry: blockRetry)
    }

    private mutating func reset() {
        eventType = ""
        data = ""
        hasData = false
        blockRetry = nil
        inEvent = false
    }

    /// ASCII digits as milliseconds, saturating at `Int.max`; `nil` for anything else.
    static func milliseconds(_ text: Substring) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int(byte - 0x30))
            value = overflowTimes || overflowSum ? Int.max : sum
        }
        return value
    }
}
