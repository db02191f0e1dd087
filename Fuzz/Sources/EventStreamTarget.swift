import Foundation

@testable import GentleNetworking

/// The streaming parsers: `LineSplitter`, `ServerSentEventParser` and `JSONLinesDecoder`.
///
/// Input: byte 0 picks the line limit (16–271 bytes), byte 1 the event limit (8–263 bytes),
/// byte 2 the chunk size (1–64 bytes); the rest is the body.
///
/// Asserts: no trap; only `StreamingError` is thrown; feeding the body in chunks gives exactly
/// the lines, events and error of feeding it whole; no line or event data passes its limit; the
/// last event ID never contains NUL; a JSON Lines failure never quotes the line.
enum EventStreamTarget {
    struct Outcome: Equatable {
        var lines: [String] = []
        var events: [ServerSentEvent] = []
        var error: StreamingError?
    }

    static func run(_ input: FuzzInput) {
        var input = input
        let maxLine = 16 + Int(input.byte())
        let maxEvent = 8 + Int(input.byte())
        let chunk = 1 + input.choice(64)
        let body = input.rest()
        let whole = parse(body, chunk: max(1, body.count), maxLine: maxLine, maxEvent: maxEvent)
        let chunked = parse(body, chunk: chunk, maxLine: maxLine, maxEvent: maxEvent)
        if whole != chunked { violated("chunks of \(chunk) gave \(chunked), whole gave \(whole)") }
        for line in whole.lines where line.utf8.count > maxLine { violated("a line of \(line.utf8.count) bytes") }
        for event in whole.events {
            if event.data.utf8.count > maxEvent { violated("an event of \(event.data.utf8.count) bytes") }
            if event.id?.contains("\u{0}") == true { violated("an id with NUL") }
            if let retry = event.retry, retry < 0 { violated("retry \(retry)") }
        }
        let decoder = JSONLinesDecoder<[String: Int]>()
        for (index, line) in whole.lines.enumerated() {
            do {
                _ = try decoder.decode(line, number: index + 1)
            } catch let StreamingError.undecodableLine(number, message) {
                if number != index + 1 { violated("line \(index + 1) reported as \(number)") }
                // Byte-wise: Foundation's String.contains stops at a NUL (it matched ".\0\0…" in
                // "…valid JSON.", a false finding).
                if line.utf8.count > 12, Array(message.utf8).firstRange(of: Array(line.utf8)) != nil {
                    violated("the message quotes the line")
                }
            } catch {
                violated("a \(type(of: error)) from JSONLinesDecoder")
            }
        }
    }

    static func parse(_ body: [UInt8], chunk: Int, maxLine: Int, maxEvent: Int) -> Outcome {
        var outcome = Outcome()
        var splitter = LineSplitter(maxLineBytes: maxLine)
        var parser = ServerSentEventParser(maxEventBytes: maxEvent)
        func take(_ line: String) throws(StreamingError) {
            outcome.lines.append(line)
            if let event = try parser.consume(line: line) { outcome.events.append(event) }
        }
        do throws(StreamingError) {
            var start = 0
            while start < body.count {
                let end = min(body.count, start + chunk)
                for line in try splitter.push(body[start..<end]) { try take(line) }
                start = end
            }
            if let line = try splitter.finish() { try take(line) }
            try parser.finish()
        } catch {
            outcome.error = error
        }
        return outcome
    }
}
