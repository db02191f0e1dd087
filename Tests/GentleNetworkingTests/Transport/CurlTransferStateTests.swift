import Foundation
import Testing

@testable import GentleNetworking

/// Every transition of the libcurl transfer's state value, without any I/O.
@Suite("CurlTransferState: limits, framing and every way a transfer ends")
struct CurlTransferStateTests {
    private static let limits = CurlTransferState.Limits(maxBodyBytes: 100, maxHeaderCount: 4, maxHeaderBytes: 2048)

    private func makeState(
        _ sink: CurlTransferState.SinkKind = .memory, limits: CurlTransferState.Limits = Self.limits,
        head: Bool = false
    ) -> CurlTransferState {
        var state = CurlTransferState(sink: sink, limits: limits, isHeadRequest: head, url: URL(string: "http://h/"))
        state.submitted()
        return state
    }

    @discardableResult
    private func feed(_ state: inout CurlTransferState, _ lines: [String]) -> CurlTransferState.Actions {
        var last = CurlTransferState.Actions()
        for line in lines {
            last = Array((line + "\r\n").utf8).withUnsafeBytes { state.headerLine($0) }
            if last.abort { return last }
        }
        return last
    }

    private func failureCode(_ actions: CurlTransferState.Actions) -> TransportError.Code? {
        if case .failure(let error) = actions.resumeCaller { return error.code }
        return nil
    }

    @Test(
        "A request sent a second time in one transfer (libcurl's replay): stopped as .connectionLost unless replayable")
    func replay() {
        var state = makeState()
        #expect(!state.sendingRequest(replayable: false).abort, "the first send goes")
        let second = state.sendingRequest(replayable: false)
        #expect(second.abort)
        #expect(second.resumeCaller == nil, "the caller is resumed at the end, with the state's error")
        let ended = state.finished(libcurlFailure: TransportError(.other, url: nil, message: "aborted by callback"))
        #expect(failureCode(ended) == .connectionLost)

        var replayable = makeState()
        #expect(!replayable.sendingRequest(replayable: true).abort)
        #expect(!replayable.sendingRequest(replayable: true).abort)
        #expect(replayable.requestsSent == 2)
    }

    @Test("A complete exchange: head parsed, body counted, the caller resumed once with the head")
    func completes() throws {
        var state = makeState()
        #expect(state.phase == .running)
        let actions = feed(&state, ["HTTP/1.1 200 OK", "Content-Length: 5", "X-A: b", ""])
        #expect(!actions.abort)
        #expect(actions.resumeCaller == nil)  // in-memory: only at the end
        #expect(state.bodyBytes(5).0 == .accept)
        let end = state.finished(libcurlFailure: nil)
        guard case .head(let head) = end.resumeCaller else {
            Issue.record("expected the head")
            return
        }
        #expect(head.statusCode == 200)
        #expect(head.headers.map(\.0) == ["Content-Length", "X-A"])
        #expect(state.phase == .ended)
        // Every later event is a no-op: exactly once.
        #expect(state.finished(libcurlFailure: nil).resumeCaller == nil)
        #expect(state.cancelled().resumeCaller == nil)
        #expect(state.abandoned(TransportError(.other, url: nil, message: "x")).resumeCaller == nil)
        #expect(state.bodyBytes(1).0 == .abort)
    }

    @Test("Header fields keep their names and values byte for byte, in order, whatever they contain")
    func fieldsRoundTrip() {
        var state = makeState(limits: .init(maxBodyBytes: 100, maxHeaderCount: 10, maxHeaderBytes: 4096))
        var lines: [[UInt8]] = [
            "HTTP/1.1 200 OK", "X-Url: http://h:8/a?b=c", "X-Empty:", "X-Spaces:  \t padded", "set-cookie: a=1",
            "Set-Cookie: b=2",
        ].map { Array($0.utf8) }
        lines.append(Array("X-Bytes: ".utf8) + [0xFF, 0x00, 0x41])  // invalid UTF-8 and a NUL
        lines.append(Array("X-Long: ".utf8) + Array(repeating: UInt8(ascii: "v"), count: 600))
        for line in lines + [[]] {
            let actions = (line + Array("\r\n".utf8)).withUnsafeBytes { state.headerLine($0) }
            #expect(!actions.abort)
        }
        let fields = state.head.headers
        #expect(state.head.fieldCount == 7)
        #expect(fields.map(\.0) == ["X-Url", "X-Empty", "X-Spaces", "set-cookie", "Set-Cookie", "X-Bytes", "X-Long"])
        #expect(
            fields.map(\.1).prefix(5) == ["http://h:8/a?b=c", "", "padded", "a=1", "b=2"])
        #expect(fields[5].1 == "\u{FFFD}\u{0}A")
        #expect(fields[6].1 == String(repeating: "v", count: 600))
        // After the final head, a status line is a trailer: the head keeps its status and fields.
        _ = Array("HTTP/1.1 302 Found\r\n".utf8).withUnsafeBytes { state.headerLine($0) }
        #expect(state.head.statusCode == 200 && state.head.fieldCount == 7)
    }

    @Test(
        "A transfer libcurl ends inside the head (the connection closed before its blank line) is .connectionLost",
        arguments: [
            ["HTTP/1.1 200 OK"], ["HTTP/1.1 200 OK", "Content-Type: text/plain"],
            ["HTTP/1.1 100 Continue", "", "HTTP/1.1 204 No Content"],
        ])
    func endsInsideHead(lines: [String]) throws {
        var state = makeState()
        feed(&state, lines)
        let actions = state.finished(libcurlFailure: nil)
        #expect(failureCode(actions) == .connectionLost)
        #expect(state.phase == .ended)
    }

    @Test("1xx interim heads are replaced by the final one")
    func interimHeads() {
        var state = makeState()
        feed(&state, ["HTTP/1.1 100 Continue", "", "HTTP/1.1 201 Created", "Content-Length: 0", ""])
        #expect(state.head.statusCode == 201)
        #expect(state.head.headers.count == 1)
    }

    @Test(
        "A status line inside a head is .badResponse: it does not reset the framing seen, nor end on a 1xx",
        arguments: [
            ["HTTP/1.1 200 OK", "Transfer-Encoding: chunked", "HTTP/1.1 200 OK: x", "Content-Length: 5", ""],
            ["HTTP/1.1 200 OK", "Content-Length: 27", "HTTP/1.1 200 OK", "Content-Length: 47", ""],
            ["HTTP/1.1 200 OK", "Content-Length: 0", "HTTP/1.1 100 Continue:", ""],
        ])
    func statusLineInsideHead(lines: [String]) {
        var state = makeState()
        let actions = feed(&state, lines)
        #expect(actions.abort)
        #expect(state.failure?.code == .badResponse)
        let end = state.finished(libcurlFailure: nil)
        #expect(failureCode(end) == .badResponse)
    }

    @Test("A transfer that ends after a 1xx head only has no response: .badResponse")
    func endsOnInterimHead() {
        var state = makeState()
        #expect(!feed(&state, ["HTTP/1.1 103 Early Hints", "Link: </a.css>", ""]).abort)
        #expect(failureCode(state.finished(libcurlFailure: nil)) == .badResponse)
    }

    @Test(
        "A 101 Switching Protocols (never asked for) ends the transfer as .badResponse, on every sink",
        arguments: [CurlTransferState.SinkKind.memory, .stream])
    func switchingProtocols(sink: CurlTransferState.SinkKind) {
        var state = makeState(sink)
        let actions = feed(&state, ["HTTP/1.1 101 Switching Protocols", "Upgrade: x-private", ""])
        #expect(actions.abort)
        #expect(state.failure?.code == .badResponse)
        // libcurl then reports a write error; the state's reason wins.
        let end = state.finished(libcurlFailure: TransportError(.other, url: nil, message: "write error"))
        #expect(failureCode(end) == .badResponse)
        #expect(state.phase == .ended)
    }

    @Test("Body bytes after an interim 1xx head are .badResponse: no final head will come")
    func bodyAfterInterimHead() {
        var state = makeState(.stream)
        #expect(!feed(&state, ["HTTP/1.1 102 Processing", ""]).abort)
        let (decision, actions) = state.bodyBytes(4)
        #expect(decision == .abort && actions.abort)
        #expect(state.failure?.code == .badResponse)
    }

    @Test(
        "Conflicting, listed-but-different, malformed and TE+CL framing are .badResponse",
        arguments: [
            ["Content-Length: 27", "Content-Length: 47"],
            ["content-length: 7", "Content-Length: 5"],
            ["Content-Length: 27, 47"],
            ["Content-Length: -1"],
            ["Content-Length: 12abc"],
            ["Content-Length: "],
            ["Content-Length: 99999999999999999999999"],
            ["Transfer-Encoding: chunked", "Content-Length: 10"],
            ["content-length: 10", "TRANSFER-ENCODING: chunked"],
        ])
    func badFraming(fields: [String]) {
        var state = makeState(limits: .init(maxBodyBytes: nil, maxHeaderCount: 10, maxHeaderBytes: 4096))
        let actions = feed(&state, ["HTTP/1.1 200 OK"] + fields + [""])
        #expect(actions.abort)
        #expect(state.failure?.code == .badResponse)
        // libcurl then reports a write error; the state's reason wins.
        let end = state.finished(libcurlFailure: TransportError(.other, url: nil, message: "write error"))
        #expect(failureCode(end) == .badResponse)
    }

    @Test("Identical repeated Content-Length values are one value (RFC 9112 §6.3)")
    func identicalLengths() {
        var state = makeState()
        let actions = feed(&state, ["HTTP/1.1 200 OK", "Content-Length: 42, 42", "Content-Length: 42", ""])
        #expect(!actions.abort)
        #expect(state.failure == nil)
    }

    @Test("A Content-Length above the in-memory limit fails before any body byte")
    func declaredTooLarge() {
        var state = makeState()
        let actions = feed(&state, ["HTTP/1.1 200 OK", "Content-Length: 101", ""])
        #expect(actions.abort)
        #expect(state.failure?.code == .responseTooLarge)
        #expect(state.bodyBytes == 0)
    }

    @Test("The declared length is not held against HEAD requests, 304s or streams")
    func declaredLengthExemptions() {
        var head = makeState(head: true)
        #expect(!feed(&head, ["HTTP/1.1 200 OK", "Content-Length: 1000", ""]).abort)
        var notModified = makeState()
        #expect(!feed(&notModified, ["HTTP/1.1 304 Not Modified", "Content-Length: 1000", ""]).abort)
        var stream = makeState(.stream, limits: .init(maxBodyBytes: nil, maxHeaderCount: 4, maxHeaderBytes: 2048))
        #expect(!feed(&stream, ["HTTP/1.1 200 OK", "Content-Length: 1000", ""]).abort)
    }

    @Test("Decoded body bytes past the limit abort: the compression-bomb case")
    func bodyLimit() {
        var state = makeState()
        feed(&state, ["HTTP/1.1 200 OK", "Content-Encoding: gzip", ""])
        #expect(state.bodyBytes(60).0 == .accept)
        #expect(state.bodyBytes(40).0 == .accept)  // exactly the limit is fine
        #expect(state.bodyBytes(1).0 == .abort)
        #expect(state.failure?.code == .responseTooLarge)
        #expect(failureCode(state.finished(libcurlFailure: nil)) == .responseTooLarge)
    }

    @Test("A download's non-2xx body is held to the error limit; its 2xx body is not (a 500 cannot fill the disk)")
    func downloadErrorBodyLimit() {
        let limits = CurlTransferState.Limits(
            maxBodyBytes: nil, maxNon2xxFileBytes: 100, maxHeaderCount: 4, maxHeaderBytes: 2048)
        // A 2xx download: unlimited, whatever its length says.
        var ok = makeState(.file, limits: limits)
        #expect(!feed(&ok, ["HTTP/1.1 200 OK", "Content-Length: 1000000", ""]).abort)
        #expect(ok.bodyBytes(1_000_000).0 == .accept)
        // A 500 (or a redirect's own body) without a length: stops past the limit.
        for status in ["500 Internal Server Error", "302 Found"] {
            var error = makeState(.file, limits: limits)
            feed(&error, ["HTTP/1.1 \(status)", ""])
            #expect(error.bodyBytes(100).0 == .accept)
            #expect(error.bodyBytes(1).0 == .abort)
            #expect(error.failure?.code == .responseTooLarge)
            #expect(error.failure?.message.contains("answering this download") == true)
        }
        // A declared length above it fails before any body byte.
        var declared = makeState(.file, limits: limits)
        #expect(feed(&declared, ["HTTP/1.1 404 Not Found", "Content-Length: 101", ""]).abort)
        #expect(declared.failure?.code == .responseTooLarge && declared.bodyBytes == 0)
        // With a download limit too, the smaller one holds.
        var both = makeState(
            .file, limits: .init(maxBodyBytes: 50, maxNon2xxFileBytes: 100, maxHeaderCount: 4, maxHeaderBytes: 2048))
        feed(&both, ["HTTP/1.1 503 Service Unavailable", ""])
        #expect(both.bodyBytes(51).0 == .abort)
        // Streams keep their own limit only.
        var stream = makeState(.stream, limits: limits)
        feed(&stream, ["HTTP/1.1 500 Internal Server Error", ""])
        #expect(stream.bodyBytes(1000).0 == .accept)
    }

    @Test("An Int64 overflow of the byte count is a limit failure, not a trap")
    func overflow() {
        var state = makeState(.file, limits: .init(maxBodyBytes: nil, maxHeaderCount: 4, maxHeaderBytes: 2048))
        feed(&state, ["HTTP/1.1 200 OK", ""])
        #expect(state.bodyBytes(Int.max).0 == .accept)
        #expect(state.bodyBytes(Int.max).0 == .abort)  // the total overflows Int64
        #expect(state.failure?.code == .responseTooLarge)
    }

    @Test("Header count and header bytes are limited; 1xx heads count toward the bytes")
    func headerLimits() {
        var counted = makeState()
        let actions = feed(&counted, ["HTTP/1.1 200 OK", "A: 1", "B: 2", "C: 3", "D: 4", "E: 5"])
        #expect(actions.abort)
        #expect(counted.failure?.code == .responseTooLarge)

        var sized = makeState()
        let link = "Link: </" + String(repeating: "x", count: 200) + ">"
        let interim = Array(repeating: ["HTTP/1.1 103 Early Hints", link, ""], count: 12).flatMap { $0 }
        #expect(feed(&sized, interim).abort)
        #expect(sized.failure?.code == .responseTooLarge)

        // More than 16 interim heads, however small: .badResponse (as on URLSessionTransport).
        var many = makeState()
        let small = Array(repeating: ["HTTP/1.1 100 Continue", ""], count: 17).flatMap { $0 }
        #expect(feed(&many, small).abort)
        #expect(many.failure?.code == .badResponse)
        var sixteen = makeState()
        #expect(!feed(&sixteen, Array(small.dropLast(2)) + ["HTTP/1.1 200 OK", "Content-Length: 0", ""]).abort)
        #expect(sixteen.head.statusCode == 200)
    }

    @Test("A stream gets its head at the blank line, its body counted, and one ending")
    func streamLifecycle() {
        var state = makeState(.stream, limits: .init(maxBodyBytes: 10, maxHeaderCount: 4, maxHeaderBytes: 2048))
        let head = feed(&state, ["HTTP/1.1 200 OK", ""])
        guard case .head(let delivered) = head.resumeCaller else {
            Issue.record("the head is delivered at the blank line")
            return
        }
        #expect(delivered.statusCode == 200)
        #expect(state.bodyBytes(8).0 == .accept)
        state.paused(unconsumed: 8)  // handed back to libcurl; delivered again on resume
        #expect(state.phase == .paused)
        #expect(state.bodyBytes == 0)
        state.resumed()
        #expect(state.bodyBytes(8).0 == .accept)
        let (decision, _) = state.bodyBytes(3)
        #expect(decision == .abort)
        let end = state.finished(libcurlFailure: nil)
        #expect(end.resumeCaller == nil)  // already resumed with the head
        guard case .failure(let error) = end.endStream else {
            Issue.record("the stream ends with the limit error")
            return
        }
        #expect(error.code == .responseTooLarge)
    }

    @Test("A stream's body before any blank line delivers the head first")
    func streamBodyWithoutBlankLine() {
        var state = makeState(.stream)
        feed(&state, ["HTTP/1.1 200 OK"])
        let (decision, actions) = state.bodyBytes(1)
        #expect(decision == .accept)
        if case .head = actions.resumeCaller {} else { Issue.record("head delivered with the first byte") }
    }

    @Test("No valid status line: the caller gets .badResponse, a stream too")
    func noStatusLine() {
        var memory = makeState()
        feed(&memory, ["HTTP/1.1 2000 Nope", ""])
        #expect(failureCode(memory.finished(libcurlFailure: nil)) == .badResponse)
        var stream = makeState(.stream)
        feed(&stream, ["garbage"])
        let actions = stream.finished(libcurlFailure: nil)
        #expect(failureCode(actions) == .badResponse)
        if case .failure(let error) = actions.endStream {
            #expect(error.code == .badResponse)
        } else {
            Issue.record("stream ends with the error")
        }
    }

    @Test("A status line we cannot read ends the head with .badResponse, before any body (a stream waited forever)")
    func unreadableStatusLineAtEndOfHead() {
        for line in ["HTTP/1.1 200\tOK", "HTTP/1.1 200OK", "HTTP/1.1  200 OK", "HTTP/1.1 2000 Nope"] {
            for sink in [CurlTransferState.SinkKind.stream, .memory] {
                var state = makeState(sink)
                _ = feed(&state, [line, "Content-Type: text/plain"])
                let actions = feed(&state, [""])
                #expect(actions.abort, "\(line) (\(sink))")
                #expect(failureCode(state.finished(libcurlFailure: nil)) == .badResponse, "\(line) (\(sink))")
            }
        }
        // An interim head still waits for the final one.
        var interim = makeState(.stream)
        #expect(!feed(&interim, ["HTTP/1.1 100 Continue", ""]).abort)
    }

    @Test("Cancellation first: the caller and stream end cancelled; libcurl's later end changes nothing")
    func cancelFirst() {
        var state = makeState(.stream)
        let cancelled = state.cancelled()
        if case .cancelled = cancelled.resumeCaller {} else { Issue.record("caller cancelled") }
        if case .cancelled = cancelled.endStream {} else { Issue.record("stream cancelled") }
        let later = state.finished(libcurlFailure: TransportError(.connectionLost, url: nil, message: "x"))
        #expect(later.resumeCaller == nil)
        #expect(later.endStream == nil)
        #expect(state.bodyBytes(1).0 == .abort)
        #expect(Array("X: y\r\n".utf8).withUnsafeBytes { state.headerLine($0) }.abort)
    }

    @Test("Cancellation after the stream head: only the stream ends")
    func cancelAfterHead() {
        var state = makeState(.stream)
        feed(&state, ["HTTP/1.1 200 OK", ""])
        let cancelled = state.cancelled()
        #expect(cancelled.resumeCaller == nil)
        if case .cancelled = cancelled.endStream {} else { Issue.record("stream cancelled") }
    }

    @Test("libcurl's failure, a sink failure and a shutdown each end the transfer with their error")
    func failures() {
        var failed = makeState()
        let code = failureCode(failed.finished(libcurlFailure: TransportError(.timedOut, url: nil, message: "t")))
        #expect(code == .timedOut)

        var sink = makeState(.file)
        feed(&sink, ["HTTP/1.1 200 OK", ""])
        #expect(sink.sinkFailed(TransportError(.other, url: nil, message: "disk full")).abort)
        #expect(failureCode(sink.finished(libcurlFailure: nil)) == .other)

        var abandoned = makeState()
        let shutdown = abandoned.abandoned(TransportError(.connectionLost, url: nil, message: "shut down"))
        #expect(failureCode(shutdown) == .connectionLost)
        #expect(abandoned.phase == .ended)
    }

    @Test("Pause and resume only apply while running")
    func pauseResume() {
        var state = makeState(.stream)
        state.resumed()
        #expect(state.phase == .running)
        state.paused(unconsumed: 0)
        state.paused(unconsumed: 0)
        #expect(state.phase == .paused)
        _ = state.cancelled()
        state.resumed()
        #expect(state.phase == .ended)
    }
}
