import Foundation
import GentleNetworking
import Testing

/// The events of `text`, fed in pieces cut at `cuts`, through the splitter and the parser.
func serverSentEvents(
    _ text: String, cuts: [Int] = [], maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes
) throws -> [ServerSentEvent] {
    let bytes = Array(text.utf8)
    var splitter = LineSplitter()
    var parser = ServerSentEventParser(maxEventBytes: maxEventBytes)
    var events: [ServerSentEvent] = []
    var start = 0
    for cut in cuts + [bytes.count] {
        for line in try splitter.push(bytes[start..<cut]) {
            if let event = try parser.consume(line: line) { events.append(event) }
        }
        start = cut
    }
    if let line = try splitter.finish(), let event = try parser.consume(line: line) { events.append(event) }
    try parser.finish()
    return events
}

@Suite("ServerSentEventParser: the WHATWG event-stream rules")
struct ServerSentEventParserTests {
    @Test("The specification's examples: multi-line data joined with LF, ids, types, dispatch on blank lines")
    func specificationExamples() throws {
        let stream =
            "data: YHOO\ndata: +2\ndata: 10\n\n: comment\n\nevent: add\ndata: 73857293\n\nid: 1\ndata: second\n\n"
        #expect(
            try serverSentEvents(stream) == [
                ServerSentEvent(data: "YHOO\n+2\n10"), ServerSentEvent(event: "add", data: "73857293"),
                ServerSentEvent(data: "second", id: "1"),
            ])
        // "data" without a colon is an empty data line; two of them are one LF.
        #expect(try serverSentEvents("data\n\ndata\ndata\n\ndata:\n\n").map(\.data) == ["", "\n", ""])
        // Only one space after the colon is dropped.
        #expect(try serverSentEvents("data:test\n\ndata:  test\n\n").map(\.data) == ["test", " test"])
    }

    @Test("Every split point of a stream gives the same events, with CRLF, CR and LF endings and a BOM")
    func splitsEverywhere() throws {
        let stream =
            "\u{FEFF}event: token\r\ndata: Hel\r\ndata: lo ✓\r\n\r\nid: 7\rdata: world\r\rretry: 1500\ndata: x\n\n"
        let expected = [
            ServerSentEvent(event: "token", data: "Hel\nlo ✓"), ServerSentEvent(data: "world", id: "7"),
            ServerSentEvent(data: "x", id: "7", retry: 1500),
        ]
        let length = stream.utf8.count
        for cut in 0...length {
            #expect(try serverSentEvents(stream, cuts: [cut]) == expected, "cut at \(cut)")
        }
        #expect(try serverSentEvents(stream, cuts: Array(1..<length)) == expected)
    }

    @Test("A BOM only counts at the very start; later it is part of the field name")
    func byteOrderMark() throws {
        #expect(try serverSentEvents("\u{FEFF}data: a\n\n").map(\.data) == ["a"])
        #expect(try serverSentEvents("data: a\n\n\u{FEFF}data: b\n\n").map(\.data) == ["a"])
    }

    @Test("The last event ID is sticky; an id with NUL is ignored; an empty id resets it")
    func lastEventID() throws {
        var parser = ServerSentEventParser()
        for line in ["id: 41", "data: a", "", "data: b", "", "id: bad\u{0}id", "data: c", "", "id", "data: d", ""] {
            _ = try parser.consume(line: line)
        }
        #expect(parser.lastEventID == "")
        #expect(
            try serverSentEvents("id: 41\ndata: a\n\ndata: b\n\nid: x\u{0}y\ndata: c\n\n").map(\.id) == [
                "41", "41", "41",
            ])
        // An id alone (no data) is kept for the next event, without dispatching anything.
        #expect(try serverSentEvents("id: 9\n\ndata: later\n\n") == [ServerSentEvent(data: "later", id: "9")])
        #expect(ServerSentEventParser(lastEventID: "resume-from").lastEventID == "resume-from")
    }

    @Test("An id longer than 4 KiB is ignored (the last event ID stays); one of exactly 4 KiB is kept")
    func longEventID() throws {
        let longest = String(repeating: "a", count: ServerSentEventParser.maxEventIDBytes)
        let events = try serverSentEvents(
            "id: 7\ndata: a\n\nid: \(longest)b\ndata: b\n\nid: \(longest)\ndata: c\n\n")
        #expect(events.map(\.id) == ["7", "7", longest])
        var parser = ServerSentEventParser()
        for line in ["id: 7", "", "id: " + String(repeating: "x", count: 300_000), ""] {
            _ = try parser.consume(line: line)
        }
        #expect(parser.lastEventID == "7")
    }

    @Test("retry: ASCII digits only; others ignored; huge values saturate; it applies without an event")
    func retry() throws {
        var parser = ServerSentEventParser()
        for line in ["retry: 250", "", "retry: 12a", "retry: -5", "retry:", "retry: 1.5"] {
            #expect(try parser.consume(line: line) == nil)
        }
        #expect(parser.reconnectionTime == 250)
        _ = try parser.consume(line: "retry: 99999999999999999999999999999")
        #expect(parser.reconnectionTime == Int.max)
        #expect(try serverSentEvents("retry: 3000\ndata: a\n\ndata: b\n\n").map(\.retry) == [3000, nil])
    }

    @Test("Unknown fields and comments are ignored; a block without data dispatches nothing")
    func ignored() throws {
        #expect(try serverSentEvents(": hello\nfoo: bar\nevent: ping\n\n:\n\n").isEmpty)
        #expect(try serverSentEvents("event: a\n\ndata: b\n\n") == [ServerSentEvent(data: "b")], "the type resets")
    }

    @Test("An event's data above the limit throws; at the limit it is dispatched")
    func eventLimit() throws {
        #expect(try serverSentEvents("data: 12345\ndata: 12\n\n", maxEventBytes: 8).map(\.data) == ["12345\n12"])
        #expect(throws: StreamingError.eventTooLarge(limit: 8)) {
            try serverSentEvents("data: 12345\ndata: 123\n\n", maxEventBytes: 8)
        }
        #expect(throws: StreamingError.eventTooLarge(limit: 4)) {
            try serverSentEvents("data: 12345\n\n", maxEventBytes: 4)
        }
        // Many small events never accumulate against the limit.
        #expect(try serverSentEvents(String(repeating: "data: 1234\n\n", count: 100), maxEventBytes: 4).count == 100)
    }

    @Test("A stream that ends mid-event is StreamingError.incompleteEvent; ending after a blank line is fine")
    func incomplete() throws {
        #expect(throws: StreamingError.incompleteEvent) { try serverSentEvents("data: a\n\ndata: partial") }
        #expect(throws: StreamingError.incompleteEvent) { try serverSentEvents("data: a\n\nevent: x\n") }
        #expect(try serverSentEvents("data: a\n\n: trailing comment\n").map(\.data) == ["a"])
    }
}

/// After a refused event or line, an iteration is over: nothing of what followed is handed out.
@Suite("Streaming sequences end at their first error")
struct StreamingSequenceEndTests {
    @Test(
        "A last line without its line ending is never applied: a retry: cut short sets nothing, the event is incomplete"
    )
    func unterminatedLastLine() async throws {
        var events = HTTPByteStream.chunks([Data("retry: 60000\ndata: a\n\nretry: 6".utf8)])
            .serverSentEvents().makeAsyncIterator()
        #expect(try await events.next()?.data == "a")
        await #expect(throws: StreamingError.incompleteEvent) { _ = try await events.next() }
        // Before: 6 ms (then the 0.5 s floor), from `retry: 6` of a cut `retry: 60000`.
        #expect(events.reconnectionTime == 60000)
        var identified = HTTPByteStream.chunks([Data("id: 1\ndata: a\n\nid: 2".utf8)])
            .serverSentEvents().makeAsyncIterator()
        #expect(try await identified.next()?.id == "1")
        await #expect(throws: StreamingError.incompleteEvent) { _ = try await identified.next() }
        #expect(identified.lastEventID == "1")
        // A comment cut short changes nothing: the body ends cleanly.
        var commented = HTTPByteStream.chunks([Data("data: a\n\n: keep-alive".utf8)])
            .serverSentEvents().makeAsyncIterator()
        #expect(try await commented.next()?.data == "a")
        #expect(try await commented.next() == nil)
    }

    @Test("An event too large throws once; the next call returns nil, never the rest of that event")
    func serverSentEventsEnd() async throws {
        var events = HTTPByteStream.chunks([Data("data: 12345\ndata: 67890\n\ndata: later\n\n".utf8)])
            .serverSentEvents(maxEventBytes: 8).makeAsyncIterator()
        await #expect(throws: StreamingError.self) { _ = try await events.next() }
        let after = try await events.next()
        #expect(after == nil, "\(String(describing: after))")
    }

    @Test("A line too long mid-event throws once; the next call returns nil, not a second, incompleteEvent error")
    func lineFaultEnds() async throws {
        var events = HTTPByteStream.chunks([Data(("data: ok\ndata: " + String(repeating: "x", count: 100)).utf8)])
            .serverSentEvents(maxLineBytes: 32).makeAsyncIterator()
        await #expect(throws: StreamingError.self) { _ = try await events.next() }
        let after = try await events.next()
        #expect(after == nil)
    }

    @Test("An undecodable JSON line throws once; the next call returns nil, not the lines after it")
    func jsonLinesEnd() async throws {
        struct Item: Decodable, Equatable { let n: Int }
        var items = HTTPByteStream.chunks([Data("{\"n\":1}\nbad\n{\"n\":3}\n".utf8)])
            .jsonLines(of: Item.self).makeAsyncIterator()
        #expect(try await items.next() == Item(n: 1))
        await #expect(throws: StreamingError.self) { _ = try await items.next() }
        let after = try await items.next()
        #expect(after == nil, "\(String(describing: after))")
    }

    @Test("Events before the body's first id: carry the ID given as lastEventID")
    func stickyID() async throws {
        var events = HTTPByteStream.chunks([Data("data: a\n\nid: 9\ndata: b\n\ndata: c\n\n".utf8)])
            .serverSentEvents(lastEventID: "41").makeAsyncIterator()
        #expect(try await events.next()?.id == "41")
        #expect(try await events.next()?.id == "9")
        #expect(try await events.next()?.id == "9")
    }
}
