import Foundation

/// The status line and header fields of one response, as received.
///
/// The fields are kept as the bytes libcurl handed over and become strings only when
/// ``headers`` is read: most requests (`HTTPNetworkService.request`) never read them, and two
/// strings per field line cost more than the rest of the head's handling.
struct CurlResponseHead: Sendable, Equatable {
    var statusCode = 0
    var httpVersion = "HTTP/1.1"
    /// The field lines as received (without their line ending), each followed by a LF. libcurl
    /// ends a header line at its LF, so a stored line never contains one.
    private var fieldLines: [UInt8] = []
    /// How many field lines `fieldLines` holds.
    private(set) var fieldCount = 0

    /// How many bytes the field lines take (with their line ends).
    var fieldBytes: Int { fieldLines.count }

    /// The header fields in the order received: the name is what precedes a line's first colon
    /// (as spelled by the server), the value what follows it without leading spaces and tabs;
    /// invalid UTF-8 is repaired with U+FFFD. Parsed from the raw lines on every read.
    var headers: [(String, String)] {
        var fields: [(String, String)] = []
        fields.reserveCapacity(fieldCount)
        fieldLines.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                var end = start
                while end < raw.count, raw[end] != 0x0A { end += 1 }
                var colon = start
                while colon < end, raw[colon] != UInt8(ascii: ":") { colon += 1 }
                var valueStart = min(colon + 1, end)
                while valueStart < end, raw[valueStart] == 0x20 || raw[valueStart] == 0x09 { valueStart += 1 }
                fields.append(
                    (
                        String(decoding: UnsafeRawBufferPointer(rebasing: raw[start..<colon]), as: UTF8.self),
                        String(decoding: UnsafeRawBufferPointer(rebasing: raw[valueStart..<end]), as: UTF8.self)
                    ))
                start = end + 1
            }
        }
        return fields
    }

    /// Appends one field line (`name:value`, without its line ending; it must contain a colon
    /// and no LF).
    mutating func appendFieldLine(_ line: UnsafeRawBufferPointer) {
        if fieldLines.isEmpty { fieldLines.reserveCapacity(512) }
        fieldLines.append(contentsOf: line)
        fieldLines.append(0x0A)
        fieldCount += 1
    }
}

/// The lifecycle of one libcurl transfer as a plain value: the owner (``CurlEasyRequest``)
/// feeds it what libcurl reports (header lines, body bytes, pauses, the end) and what the
/// caller does (cancel), and applies the actions it returns. It does no I/O and holds no
/// references, so every transition, every limit and every way a transfer can end is tested
/// without a socket, and no cycle can run through it.
///
/// It guarantees:
/// - the caller is resumed exactly once (``Outcome``), whatever order the endings arrive in;
/// - a stream is ended exactly once, after its head was delivered or with the error instead;
/// - framing is strict (RFC 9112 §6.3): conflicting or malformed `Content-Length`, or
///   `Transfer-Encoding` with `Content-Length`, abort the transfer as `.badResponse`;
/// - limits hold: header count and bytes, and the decoded body size (compression bombs
///   included, since libcurl hands over decoded bytes), as `.responseTooLarge`.
struct CurlTransferState: Sendable {
    /// Where the body goes; only the limits and the stream head delivery depend on it.
    enum SinkKind: Sendable, Equatable {
        case memory
        case file
        case stream
    }

    /// The limits one transfer is held to.
    struct Limits: Sendable, Equatable {
        /// The most decoded body bytes; `nil` for none.
        var maxBodyBytes: Int64?
        /// For a file sink, the most decoded body bytes of a response that is not 2xx (an error
        /// page or a redirect's body is not the download, so a download's lack of a limit does
        /// not extend to it); `nil` for none. Ignored for the other sinks.
        var maxNon2xxFileBytes: Int64? = nil
        /// The most header lines in one response head.
        var maxHeaderCount: Int
        /// The most header bytes, summed over every head of the transfer (1xx included).
        var maxHeaderBytes: Int
    }

    /// Where the transfer is.
    enum Phase: Sendable, Equatable {
        /// Configured, not yet handed to the event loop.
        case created
        /// In the multi handle, receiving.
        case running
        /// Paused by backpressure (streams only).
        case paused
        /// Ended: completed, failed or cancelled. Nothing changes after this.
        case ended
    }

    /// How the caller's wait ends.
    enum Outcome: Sendable {
        /// The response head (for in-memory and file sinks: after the whole body).
        case head(CurlResponseHead)
        /// The transfer failed.
        case failure(TransportError)
        /// The caller cancelled.
        case cancelled
    }

    /// What the owner does after an event.
    struct Actions: Sendable {
        /// Resume the waiting caller with this (at most once per transfer).
        var resumeCaller: Outcome?
        /// End the stream consumer's sequence: `.some(nil)` cleanly, `.some(error)` with an error
        /// (`CancellationError` when cancelled); at most once.
        var endStream: StreamEnding?
        /// Tell libcurl to stop: return the abort value from the callback.
        var abort = false
    }

    /// How a stream ends.
    enum StreamEnding: Sendable {
        case complete
        case failure(TransportError)
        case cancelled
    }

    /// What to do with body bytes just received.
    enum BodyDecision: Sendable, Equatable {
        /// Store, write or offer them.
        case accept
        /// Abort the transfer; ``CurlTransferState/failure`` says why.
        case abort
    }

    let sink: SinkKind
    let limits: Limits
    /// Whether the request was `HEAD`: its `Content-Length` describes a body that never comes.
    let isHeadRequest: Bool
    private(set) var phase: Phase = .created
    private(set) var head = CurlResponseHead()
    /// Header lines in the current head.
    private(set) var headerCount = 0
    /// Header bytes over every head so far.
    private(set) var headerBytes = 0
    /// Decoded body bytes received.
    private(set) var bodyBytes: Int64 = 0
    /// Why the transfer was aborted by this state (it takes precedence over libcurl's code,
    /// which then only says "write error").
    private(set) var failure: TransportError?
    private(set) var callerResumed = false
    private(set) var streamEnded = false
    /// Whether the final head (status ≥ 200) was complete.
    private(set) var headComplete = false
    /// Whether the next line is a head's first (the start, or after a 1xx head's blank line):
    /// the only place a status line may be. libcurl reads an `HTTP/…` line anywhere else as an
    /// ordinary field.
    private(set) var awaitingStatusLine = true
    /// How many interim (1xx) heads came before the final one (at most
    /// `ResponseLimits.maxInterimResponses`).
    private(set) var interimHeads = 0
    private var contentLength: Int64?
    private var hasTransferEncoding = false
    /// How many times libcurl has started sending the request (see ``sendingRequest(replayable:)``).
    private(set) var requestsSent = 0
    let url: URL?

    init(sink: SinkKind, limits: Limits, isHeadRequest: Bool, url: URL?) {
        self.sink = sink
        self.limits = limits
        self.isHeadRequest = isHeadRequest
        self.url = url
    }

    // MARK: Events

    /// libcurl is about to send the request on a connection (`CURLOPT_PREREQFUNCTION`);
    /// `replayable`: the request may be sent twice (an idempotent method, or an
    /// `Idempotency-Key`).
    ///
    /// A second time in one transfer is libcurl sending it again on a new connection, because
    /// the reused one closed before any response byte. The server may have read and acted on
    /// the first (it crashed, or closed without answering), so a request that is not
    /// replayable is not sent again (RFC 9110 §9.2.2): the transfer ends as
    /// ``TransportError/Code/connectionLost``, and whether to send it again is the caller's
    /// (or `RetryTransport`'s) decision.
    mutating func sendingRequest(replayable: Bool) -> Actions {
        requestsSent &+= 1
        guard requestsSent > 1, !replayable, phase != .ended else { return Actions() }
        return abort(
            TransportError(
                .connectionLost, url: url,
                message: "The connection closed after the request was sent, before any response; "
                    + "a request that is not idempotent (no Idempotency-Key) is not sent again, "
                    + "since the server may have acted on it."))
    }

    /// The transfer was handed to libcurl.
    mutating func submitted() {
        if phase == .created { phase = .running }
    }

    /// One raw header line from libcurl: a status line, a field, or the blank line that ends a head.
    mutating func headerLine(_ bytes: UnsafeRawBufferPointer) -> Actions {
        guard phase == .running || phase == .paused, failure == nil else { return Actions(abort: true) }
        headerBytes += bytes.count
        if headerBytes > limits.maxHeaderBytes {
            return abort(
                TransportError(
                    .responseTooLarge, url: url,
                    message: "The response headers exceed the limit of \(limits.maxHeaderBytes) bytes."))
        }
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            return endOfHead()
        }
        // A line of only spaces or tabs is not the blank line that ends the head (libcurl reads
        // on, as for a folded line): it is skipped, and the fields after it still count.
        while end > 0, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        if end == 0 {
            return Actions()
        }
        let line = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
        let startsHead = awaitingStatusLine
        awaitingStatusLine = false
        // A new status line starts a new head, after 1xx interim responses only: after a final
        // head, libcurl passes a chunked body's trailers here, and a trailer written as a status
        // line (`HTTP/1.1 302 Found:`) must not replace the response.
        if !headComplete, Self.isStatusLine(line) {
            // Inside a head it is a contradiction, not a new head: taken as one, it reset the
            // framing seen so far (`Transfer-Encoding` then `Content-Length` passed the check)
            // and could end the exchange with a 1xx as its response. corelibs refuses it too.
            guard startsHead else {
                return abort(
                    TransportError(.badResponse, url: url, message: "The response head has a second status line."))
            }
            head = CurlResponseHead()
            headerCount = 0
            contentLength = nil
            hasTransferEncoding = false
            headComplete = false
            let space = line.firstIndex(of: 0x20) ?? end
            head.httpVersion = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<space]), as: UTF8.self)
            head.statusCode = Self.statusCode(line, after: space)
            return Actions()
        }
        headerCount += 1
        if headerCount > limits.maxHeaderCount {
            return abort(
                TransportError(
                    .responseTooLarge, url: url,
                    message: "The response has more than \(limits.maxHeaderCount) header fields."))
        }
        // After a final head, libcurl passes a chunked body's trailers here. They count toward the
        // limits, but are not header fields: RFC 9110 §6.5.2 forbids merging them into the header
        // section, and a trailing Content-Length must not slip past the framing checks.
        if headComplete { return Actions() }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return Actions() }
        head.appendFieldLine(line)
        if colon == 14, Self.equalsIgnoringCase(line[0..<colon], "content-length") {
            var valueStart = colon + 1
            while valueStart < end, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
            return noteContentLength(
                String(decoding: UnsafeRawBufferPointer(rebasing: line[valueStart..<end]), as: UTF8.self))
        }
        if colon == 17, Self.equalsIgnoringCase(line[0..<colon], "transfer-encoding") {
            hasTransferEncoding = true
        }
        return Actions()
    }

    /// Body bytes (decoded) arrived.
    mutating func bodyBytes(_ count: Int) -> (BodyDecision, Actions) {
        guard phase == .running || phase == .paused, failure == nil else { return (.abort, Actions(abort: true)) }
        if (100..<200).contains(head.statusCode) {
            // Body bytes after an interim head: no final response will come.
            return (.abort, abort(Self.switchedProtocols(url)))
        }
        var actions = Actions()
        if sink == .stream, !callerResumed {
            // A body without a blank line seen first (HTTP/0.9-like); the head goes now.
            actions = endOfHead()
            if actions.abort { return (.abort, actions) }
        }
        let (total, overflow) = bodyBytes.addingReportingOverflow(Int64(count))
        let limit = bodyLimit
        if overflow || limit.map({ total > $0 }) == true {
            let aborted = abort(
                TransportError(
                    .responseTooLarge, url: url,
                    message: "The response body\(limitScope) exceeds the limit of \(limit ?? Int64.max) bytes; "
                        + "the connection was closed."))
            return (.abort, Self.merge(actions, aborted))
        }
        bodyBytes = total
        return (.accept, actions)
    }

    /// The owner could not store body bytes (a download's file write failed).
    mutating func sinkFailed(_ error: TransportError) -> Actions {
        guard phase != .ended, failure == nil else { return Actions(abort: true) }
        return abort(error)
    }

    /// The stream consumer fell behind: the `unconsumed` bytes just accepted were handed back
    /// to libcurl (which delivers them again on resume), and the transfer is paused.
    mutating func paused(unconsumed: Int) {
        guard phase == .running else { return }
        phase = .paused
        bodyBytes -= Int64(min(Int64(unconsumed), bodyBytes))
    }

    /// The paused transfer was resumed.
    mutating func resumed() {
        if phase == .paused { phase = .running }
    }

    /// libcurl finished the transfer; `libcurlFailure` is its error, if any (already typed by the
    /// owner). An abort this state asked for wins over libcurl's generic "write error".
    mutating func finished(libcurlFailure: TransportError?) -> Actions {
        guard phase != .ended else { return Actions() }
        phase = .ended
        if let error = failure ?? libcurlFailure {
            failure = error
            return end(caller: .failure(error), stream: .failure(error))
        }
        // A 1xx is never the response: the exchange ended without a final head.
        guard (200...999).contains(head.statusCode) else {
            let error = TransportError(.badResponse, url: url, message: "The server sent no valid final status line.")
            failure = error
            return end(caller: .failure(error), stream: .failure(error))
        }
        // libcurl ends a transfer whose connection closed inside the head without an error: it
        // was a 200 with the fields seen so far and no body (a POST read as done).
        guard headComplete else {
            let error = TransportError(
                .connectionLost, url: url, message: "The connection closed inside the response head.")
            failure = error
            return end(caller: .failure(error), stream: .failure(error))
        }
        return end(caller: .head(head), stream: .complete)
    }

    /// The caller cancelled (any thread, through the owner's lock).
    mutating func cancelled() -> Actions {
        guard phase != .ended else { return Actions() }
        phase = .ended
        return end(caller: .cancelled, stream: .cancelled)
    }

    /// The event loop shut down with the transfer still running.
    mutating func abandoned(_ error: TransportError) -> Actions {
        guard phase != .ended else { return Actions() }
        phase = .ended
        failure = error
        return end(caller: .failure(error), stream: .failure(error))
    }

    // MARK: Helpers

    /// The body limit for the current head: a file sink's non-2xx limit applies once a status
    /// outside 200–299 is known (a transfer whose status line is unreadable is failed anyway).
    private var bodyLimit: Int64? {
        guard sink == .file, let errorLimit = limits.maxNon2xxFileBytes, !(200..<300).contains(head.statusCode)
        else { return limits.maxBodyBytes }
        return limits.maxBodyBytes.map { min($0, errorLimit) } ?? errorLimit
    }

    /// Words for the error naming ``bodyLimit``: which body it bounded, when it was not the usual one.
    private var limitScope: String {
        guard sink == .file, limits.maxNon2xxFileBytes != nil, !(200..<300).contains(head.statusCode) else {
            return ""
        }
        return " of the \(head.statusCode) answering this download"
    }

    /// The error for a 101 Switching Protocols (or body bytes after any 1xx head).
    static func switchedProtocols(_ url: URL?) -> TransportError {
        TransportError(
            .badResponse, url: url,
            message: "The server switched protocols (101) or sent a body after an interim 1xx response; "
                + "no protocol switch was asked for.")
    }

    private mutating func endOfHead() -> Actions {
        if head.statusCode == 101 {
            // We never send `Upgrade`, and what follows is not HTTP: libcurl would pass it on as
            // a body with no final head (a stream then waited for a head forever).
            return abort(Self.switchedProtocols(url))
        }
        guard head.statusCode >= 200 else {
            // A head whose status line we could not read (`HTTP/1.1 200\tOK`, two spaces, a
            // lowercase `http/`: libcurl reads all of them as 200) ends here. Waiting for another
            // head, a stream never resumed its caller: its buffer filled, libcurl paused, and a
            // paused transfer has no idle timeout.
            guard (100..<200).contains(head.statusCode) else {
                return abort(TransportError(.badResponse, url: url, message: "The server sent no valid status line."))
            }
            interimHeads += 1
            guard interimHeads <= ResponseLimits.maxInterimResponses else {
                return abort(ResponseLimits.tooManyInterimResponses(url: url))
            }
            awaitingStatusLine = true
            return Actions()  // 1xx: the final head follows
        }
        if !headComplete {
            headComplete = true
            if let error = framingError() { return abort(error) }
            if sink == .memory || (sink == .file && limits.maxNon2xxFileBytes != nil), !isHeadRequest,
                head.statusCode != 204, head.statusCode != 304, let length = contentLength, let limit = bodyLimit,
                length > limit
            {
                return abort(
                    TransportError(
                        .responseTooLarge, url: url,
                        message:
                            "The response\(limitScope) declares \(length) body bytes, above the limit of \(limit); "
                            + "nothing was read."))
            }
        }
        guard sink == .stream, !callerResumed else { return Actions() }
        guard (100...999).contains(head.statusCode) else {
            return abort(TransportError(.badResponse, url: url, message: "The server sent no valid status line."))
        }
        callerResumed = true
        return Actions(resumeCaller: .head(head))
    }

    /// RFC 9112 §6.3: the framing of the head just completed, or why it is invalid.
    private func framingError() -> TransportError? {
        if hasTransferEncoding, contentLength != nil {
            return TransportError(
                .badResponse, url: url,
                message: "The response has both Transfer-Encoding and Content-Length (RFC 9112 §6.3).")
        }
        return nil
    }

    private mutating func noteContentLength(_ value: String) -> Actions {
        // "42", or a list of identical values ("42, 42"); anything else is invalid.
        guard let parsed = ContentLength.parse(value) else {
            return abort(
                TransportError(
                    .badResponse, url: url, message: "The response has a malformed or conflicting Content-Length."))
        }
        if let previous = contentLength, previous != parsed {
            return abort(
                TransportError(.badResponse, url: url, message: "The response has conflicting Content-Length headers."))
        }
        contentLength = parsed
        return Actions()
    }

    private mutating func abort(_ error: TransportError) -> Actions {
        failure = error
        // The caller is resumed when libcurl reports the end (finished), with this error.
        return Actions(abort: true)
    }

    private mutating func end(caller: Outcome, stream: StreamEnding) -> Actions {
        var actions = Actions()
        if !callerResumed {
            callerResumed = true
            actions.resumeCaller = caller
        }
        if sink == .stream, !streamEnded {
            streamEnded = true
            actions.endStream = stream
        }
        return actions
    }

    private static func merge(_ first: Actions, _ second: Actions) -> Actions {
        Actions(
            resumeCaller: first.resumeCaller ?? second.resumeCaller, endStream: first.endStream ?? second.endStream,
            abort: first.abort || second.abort)
    }

    static func isStatusLine(_ line: UnsafeRawBufferPointer) -> Bool {
        line.count > 5 && line[0] == UInt8(ascii: "H") && line[1] == UInt8(ascii: "T") && line[2] == UInt8(ascii: "T")
            && line[3] == UInt8(ascii: "P") && line[4] == UInt8(ascii: "/")
    }

    /// "HTTP/1.1 200 OK": exactly three digits after the version, else 0 (scanned as bytes: this
    /// runs for every response).
    static func statusCode(_ line: UnsafeRawBufferPointer, after space: Int) -> Int {
        var code = 0
        var digits = 0
        var index = space + 1
        while index < line.count, digits < 4, (0x30...0x39).contains(line[index]) {
            code = code * 10 + Int(line[index] - 0x30)
            digits += 1
            index += 1
        }
        return digits == 3 && (index == line.count || line[index] == 0x20) ? code : 0
    }

    static func equalsIgnoringCase(_ bytes: Slice<UnsafeRawBufferPointer>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for (byte, want) in zip(bytes, expected) {
            let lowered = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            if lowered != want { return false }
        }
        return true
    }
}
