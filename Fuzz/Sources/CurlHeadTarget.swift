import Foundation

@testable import GentleNetworking

/// The libcurl transport's response head and body accounting: ``CurlTransferState`` fed the
/// header lines and body events libcurl would report, and ``ContentLength`` on every value.
///
/// Input: lines split at `\n`, each fed to `headerLine` with its `\n` (so `\r\n` lines arrive
/// as libcurl gives them). A line starting with `#` is an event instead: `#config` words
/// (`memory`, `file`, `stream`, `head`, `body=N`, `nobody`, `count=N`, `bytes=N`; only valid as
/// the first line), `#body N`, `#pause N`, `#resume`, `#sinkfail`, `#cancel`, `#abandon`,
/// `#finish`, `#finish-error`. After the last line the transfer is finished, as libcurl would.
///
/// Asserts: no trap; the caller is resumed at most once and exactly once after any ending;
/// a stream is ended at most once, exactly once after an ending, and only for stream sinks;
/// header count, header bytes and body bytes never pass their limits without a failure; once
/// failed, every later header line and body chunk aborts; a head handed to the caller has a
/// valid status and, once its blank line was seen (libcurl never ends a transfer inside a head),
/// valid framing (no `Transfer-Encoding` with `Content-Length`, no malformed or
/// conflicting lengths); ``ContentLength/parse(_:)`` agrees with a slow reference parser.
enum CurlHeadTarget {
    static let url = URL(string: "https://api.example.com/head")!

    struct Tally {
        var resumes = 0
        var streamEnds = 0
        var outcome: CurlTransferState.Outcome?
    }

    static func run(_ input: FuzzInput) {
        var input = input
        var lines = input.lines()
        var sink = CurlTransferState.SinkKind.memory
        var isHead = false
        var limits = CurlTransferState.Limits(maxBodyBytes: 4096, maxHeaderCount: 16, maxHeaderBytes: 2048)
        if let first = lines.first, first.hasPrefix("#config") {
            lines.removeFirst()
            for word in first.split(separator: " ").dropFirst() {
                let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let number = parts.count == 2 ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
                switch parts[0] {
                case "memory": sink = .memory
                case "file": sink = .file
                case "stream": sink = .stream
                case "head": isHead = true
                case "nobody": limits.maxBodyBytes = nil
                case "body": limits.maxBodyBytes = number.map { Int64(max(0, $0)) } ?? limits.maxBodyBytes
                // As ResponseLimits clamps them.
                case "count": limits.maxHeaderCount = max(1, number ?? limits.maxHeaderCount)
                case "bytes": limits.maxHeaderBytes = max(1024, number ?? limits.maxHeaderBytes)
                default: break
                }
            }
        }
        var state = CurlTransferState(sink: sink, limits: limits, isHeadRequest: isHead, url: url)
        state.submitted()
        var tally = Tally()
        for (offset, line) in lines.enumerated() {
            let isLast = offset == lines.count - 1
            if line.hasPrefix("#") {
                event(line, state: &state, tally: &tally)
            } else {
                let wasFailed = state.failure != nil || state.phase == .ended
                var bytes = Array(line.utf8)
                if !isLast { bytes.append(0x0A) }
                let actions = bytes.withUnsafeBytes { state.headerLine($0) }
                if wasFailed, !actions.abort { violated("a header line after the end or a failure went on") }
                note(actions, state: state, tally: &tally)
                for (_, value) in state.head.headers.suffix(1) { checkContentLength(value) }
            }
            checkLimits(state)
        }
        // libcurl always reports the end.
        note(state.finished(libcurlFailure: nil), state: state, tally: &tally)
        checkEnded(state, tally: tally)
    }

    static func event(_ line: String, state: inout CurlTransferState, tally: inout Tally) {
        let words = line.split(separator: " ", maxSplits: 1)
        let argument = words.count > 1 ? Int(words[1].trimmingCharacters(in: .whitespaces)).map { max(0, $0) } : nil
        let wasEnded = state.phase == .ended
        switch words.first ?? "" {
        case "#body":
            let wasFailed = state.failure != nil || wasEnded
            let (decision, actions) = state.bodyBytes(argument ?? 0)
            if wasFailed, decision != .abort || !actions.abort { violated("body bytes after the end or a failure") }
            if decision == .abort, !wasFailed, state.failure == nil { violated("a body abort without a failure") }
            note(actions, state: state, tally: &tally)
        case "#pause": state.paused(unconsumed: argument ?? 0)
        case "#resume": state.resumed()
        case "#sinkfail":
            note(state.sinkFailed(TransportError(.other, url: url, message: "disk full")), state: state, tally: &tally)
        case "#cancel":
            note(state.cancelled(), state: state, tally: &tally)
            checkEnded(state, tally: tally)
        case "#abandon":
            note(
                state.abandoned(TransportError(.other, url: url, message: "loop stopped")), state: state,
                tally: &tally)
            checkEnded(state, tally: tally)
        case "#finish":
            note(state.finished(libcurlFailure: nil), state: state, tally: &tally)
            checkEnded(state, tally: tally)
        case "#finish-error":
            note(
                state.finished(libcurlFailure: TransportError(.connectionLost, url: url, message: "reset")),
                state: state, tally: &tally)
            checkEnded(state, tally: tally)
        default:
            break
        }
    }

    static func note(_ actions: CurlTransferState.Actions, state: CurlTransferState, tally: inout Tally) {
        if let outcome = actions.resumeCaller {
            tally.resumes += 1
            tally.outcome = outcome
            if tally.resumes > 1 { violated("the caller was resumed twice") }
            if case .head(let head) = outcome, state.headComplete { checkDeliveredHead(head, state: state) }
        }
        if actions.endStream != nil {
            tally.streamEnds += 1
            if state.sink != .stream { violated("a stream ending for a \(state.sink) sink") }
            if tally.streamEnds > 1 { violated("the stream was ended twice") }
        }
    }

    static func checkLimits(_ state: CurlTransferState) {
        if state.headerBytes > state.limits.maxHeaderBytes, state.failure == nil {
            violated("\(state.headerBytes) header bytes over the limit without a failure")
        }
        if state.headerCount > state.limits.maxHeaderCount, state.failure == nil {
            violated("\(state.headerCount) header fields over the limit without a failure")
        }
        if state.bodyBytes < 0 { violated("negative body count \(state.bodyBytes)") }
        if let limit = state.limits.maxBodyBytes, state.bodyBytes > limit {
            violated("\(state.bodyBytes) body bytes accepted over the limit \(limit)")
        }
    }

    static func checkEnded(_ state: CurlTransferState, tally: Tally) {
        if state.phase != .ended { violated("not ended after an ending event") }
        if tally.resumes != 1 { violated("the caller was resumed \(tally.resumes) times") }
        if state.sink == .stream, tally.streamEnds != 1 { violated("the stream was ended \(tally.streamEnds) times") }
        if case .head(let head) = tally.outcome, state.headComplete, let limit = state.limits.maxBodyBytes,
            state.sink == .memory,
            !state.isHeadRequest, head.statusCode >= 200, head.statusCode != 204, head.statusCode != 304,
            let length = declaredLength(head), length > limit
        {
            violated("a declared length of \(length) over the limit \(limit) was delivered")
        }
    }

    /// A head given to the caller must be one the transport may build a response from.
    static func checkDeliveredHead(_ head: CurlResponseHead, state: CurlTransferState) {
        if !(100...999).contains(head.statusCode) { violated("delivered status \(head.statusCode)") }
        let lengths = head.headers.filter { $0.0.lowercased() == "content-length" }.map(\.1)
        let hasTransferEncoding = head.headers.contains { $0.0.lowercased() == "transfer-encoding" }
        if !lengths.isEmpty, hasTransferEncoding { violated("Transfer-Encoding with Content-Length delivered") }
        let parsed = lengths.map(referenceContentLength)
        if parsed.contains(where: { $0 == nil }) { violated("a malformed Content-Length delivered: \(lengths)") }
        if Set(parsed.compactMap { $0 }).count > 1 { violated("conflicting Content-Length delivered: \(lengths)") }
    }

    static func declaredLength(_ head: CurlResponseHead) -> Int64? {
        head.headers.first { $0.0.lowercased() == "content-length" }.flatMap { referenceContentLength($0.1) }
    }

    static func checkContentLength(_ value: String) {
        let fast = ContentLength.parse(value)
        let slow = referenceContentLength(value)
        if fast != slow {
            violated(
                "ContentLength.parse(\(value.debugDescription)) = \(String(describing: fast)), reference \(String(describing: slow))"
            )
        }
    }

    /// RFC 9112 §6.3 by the book, slowly: a comma-separated list of identical decimal numbers.
    static func referenceContentLength(_ value: String) -> Int64? {
        var result: Int64?
        for member in value.components(separatedBy: ",") {
            // RFC 9110 OWS: spaces and tabs only (not U+00A0 or U+3000).
            let digits = member.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            guard !digits.isEmpty, digits.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
            var number: Int64 = 0
            for scalar in digits.unicodeScalars {
                let (times, o1) = number.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times.addingReportingOverflow(Int64(scalar.value - 48))
                if o1 || o2 { return nil }
                number = sum
            }
            if let result, result != number { return nil }
            result = number
        }
        return result
    }
}
