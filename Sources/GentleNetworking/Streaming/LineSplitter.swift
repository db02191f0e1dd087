/// Splits a byte stream into UTF-8 lines, wherever the chunks break: a plain value (bytes in,
/// lines out), so it is tested without I/O and shared by every transport.
///
/// Lines end with `\n`, `\r\n` or `\r`. A line ending in `\r` comes out at once, even at the
/// end of a chunk; a `\n` that starts the next chunk is then taken as the rest of that `\r\n`,
/// not as an empty line. The terminator is not part of the line. A line may be at most
/// ``maxLineBytes`` bytes: a longer one throws ``StreamingError/lineTooLong(limit:)`` as soon as
/// the limit is passed, so memory stays bounded whatever the server sends.
public struct LineSplitter: Sendable {
    /// The longest line accepted, in bytes, without its terminator.
    public let maxLineBytes: Int
    /// 1 MiB: ample for JSON Lines records and Server-Sent Event fields.
    public static let defaultMaxLineBytes = 1 << 20

    private var pending: [UInt8] = []
    private var afterCarriageReturn = false
    private var failure: StreamingError?
    /// Lines produced so far (for error messages: the next line's number is this plus one).
    public private(set) var lineCount = 0

    /// Whether a line that is not UTF-8 is decoded with U+FFFD in place of each invalid
    /// sequence, rather than thrown as ``StreamingError/invalidUTF8(line:)``.
    let replacesInvalidUTF8: Bool

    /// Creates a splitter; `maxLineBytes` below 1 counts as 1. A line that is not UTF-8 throws
    /// ``StreamingError/invalidUTF8(line:)``.
    public init(maxLineBytes: Int = LineSplitter.defaultMaxLineBytes) {
        self.init(maxLineBytes: maxLineBytes, replacingInvalidUTF8: false)
    }

    /// A splitter that decodes as `replacingInvalidUTF8` says: Server-Sent Events replace
    /// invalid sequences with U+FFFD (WHATWG decodes an event stream so), so one stray byte (a
    /// proxy's Latin-1 keep-alive comment) does not end a feed for good.
    init(maxLineBytes: Int, replacingInvalidUTF8: Bool) {
        self.maxLineBytes = max(1, maxLineBytes)
        self.replacesInvalidUTF8 = replacingInvalidUTF8
    }

    /// Whether bytes of an unfinished line are held (the stream ended mid-line if it ends now).
    public var hasPartialLine: Bool { !pending.isEmpty }

    /// The fault found after the lines ``push(_:)`` last returned, not thrown yet: a reader
    /// throws it once those lines are consumed, without waiting for more bytes.
    var heldFault: StreamingError? { failure }

    /// Feeds `bytes` and returns the lines they complete, in order, all at once (the library's
    /// own line sequences take a large chunk's lines a batch at a time instead).
    ///
    /// Lines completed before a fault are returned first; the fault is thrown by the next call
    /// (this one, when no line came before it), and by every call after it.
    ///
    /// - Throws: ``StreamingError/lineTooLong(limit:)`` or ``StreamingError/invalidUTF8(line:)``.
    public mutating func push(_ bytes: some Sequence<UInt8>) throws(StreamingError) -> [String] {
        var iterator = bytes.makeIterator()
        return try push(from: &iterator, maxLines: .max)
    }

    /// ``push(_:)`` reading `bytes` only until `maxLines` lines are complete (or it ends): the
    /// rest stays in the iterator for the next call. A 1 MiB chunk of line endings is a million
    /// empty lines, 16 bytes each in an array, if taken at once.
    mutating func push<Bytes: IteratorProtocol<UInt8>>(
        from bytes: inout Bytes, maxLines: Int
    ) throws(StreamingError) -> [String] {
        if let failure { throw failure }
        var lines: [String] = []
        do throws(StreamingError) {
            while lines.count < maxLines, let byte = bytes.next() {
                if afterCarriageReturn {
                    afterCarriageReturn = false
                    if byte == 0x0A { continue }
                }
                switch byte {
                case 0x0A:
                    lines.append(try takeLine())
                case 0x0D:
                    lines.append(try takeLine())
                    afterCarriageReturn = true
                default:
                    guard pending.count < maxLineBytes else { throw StreamingError.lineTooLong(limit: maxLineBytes) }
                    pending.append(byte)
                }
            }
        } catch {
            failure = error
            pending.removeAll()
            if lines.isEmpty { throw error }
        }
        return lines
    }

    /// Ends the stream: the last line if it had no terminator, else `nil`.
    ///
    /// - Throws: ``StreamingError/invalidUTF8(line:)``, or a fault ``push(_:)`` has not thrown yet.
    public mutating func finish() throws(StreamingError) -> String? {
        if let failure { throw failure }
        afterCarriageReturn = false
        guard !pending.isEmpty else { return nil }
        return try takeLine()
    }

    /// The pending bytes as the next line. A line that is not UTF-8 is thrown by its number
    /// (not counted, so the lines before it keep theirs), or decoded with U+FFFD and counted
    /// when ``replacesInvalidUTF8``.
    private mutating func takeLine() throws(StreamingError) -> String {
        defer { pending.removeAll(keepingCapacity: pending.count <= 4096) }
        guard let line = String(validating: pending, as: UTF8.self) else {
            guard replacesInvalidUTF8 else { throw .invalidUTF8(line: lineCount + 1) }
            lineCount += 1
            return String(decoding: pending, as: UTF8.self)
        }
        lineCount += 1
        return line
    }
}
