import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A stream that yields `chunks`, then waits `hangSeconds` (a server that stalls), then throws
/// `error` or ends.
private func scriptedStream(
    _ chunks: [Data], thenThrow error: (any Error)? = nil, hangSeconds: Double = 0
)
    -> HTTPByteStream
{
    let remaining = Locked(chunks[...])
    return HTTPByteStream(
        next: {
            if let chunk = remaining.withLock({ $0.popFirst() }) { return chunk }
            if hangSeconds > 0 { try await Task.sleep(nanoseconds: UInt64(hangSeconds * 1e9)) }
            if let error { throw error }
            return nil
        }, cancel: {})
}

private func eventStreamResponse(_ status: Int = 200) throws -> HTTPURLResponse {
    let url = try #require(URL(string: "https://h.example/feed"))
    return try #require(
        HTTPURLResponse(
            url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/event-stream"]))
}

/// The events `text` dispatches, parsed line by line.
private func events(_ text: String) throws -> [ServerSentEvent] {
    var splitter = LineSplitter()
    var parser = ServerSentEventParser()
    var lines = try splitter.push(Array(text.utf8))
    if let last = try splitter.finish() { lines.append(last) }
    let dispatched = try lines.compactMap { try parser.consume(line: $0) }
    try parser.finish()
    return dispatched
}

/// Faults in a streamed body: what a caller gets, and when. Each test failed before its fix.
@Suite("Streams at their faults: no lost or invented data, no waiting, no reconnect storm")
struct StreamingFaultTests {
    @Test("A connection dropped mid-block reconnects from the last complete block's id, not the cut one")
    func lastEventIDOnlyFromCompleteBlocks() async throws {
        let sentIDs = Locked<[String?]>([])
        let clock = RecordingClock()
        let first = try eventStreamResponse()
        let stop = try eventStreamResponse(204)
        let source = EventSourceSequence(clock: clock.clock) { lastEventID in
            let number = sentIDs.withLock { ids -> Int in
                ids.append(lastEventID)
                return ids.count
            }
            guard number == 1 else { return (HTTPByteStream.single(Data()), stop) }
            // Event 2's block is cut by a dropped connection before its blank line.
            return (
                scriptedStream(
                    [Data("id: 1\ndata: one\n\nid: 2\ndata: tw".utf8)],
                    thenThrow: TransportError(.connectionLost, url: nil, message: "")), first
            )
        }
        var received: [String] = []
        for try await event in source { received.append(event.data) }
        #expect(received == ["one"])
        #expect(sentIDs.current == [nil, "1"])
    }

    @Test("The parser: an id becomes the last event ID at the blank line, even a block without data")
    func parserIDAtBlankLine() throws {
        var parser = ServerSentEventParser(lastEventID: "0")
        _ = try parser.consume(line: "id: 7")
        #expect(parser.lastEventID == "0")
        #expect(try parser.consume(line: "") == nil)  // no data: nothing dispatched, the ID counts
        #expect(parser.lastEventID == "7")
        _ = try parser.consume(line: "id: 8")
        _ = try parser.consume(line: "data: x")
        #expect(throws: StreamingError.incompleteEvent) { try parser.finish() }
        #expect(parser.lastEventID == "7")
        #expect(try events("id: 1\ndata: a\n\ndata: b\n\n").map(\.id) == ["1", "1"])
    }

    @Test(
        "Fields are matched by bytes: a combining mark after the colon or the space stays in the value",
        arguments: [
            ("data: \u{301}x\n\n", ["\u{301}x"]), ("data:\u{301}x\n\n", ["\u{301}x"]),
            ("data: a\n\n:\u{301} comment\n", ["a"]), ("\u{FEFF}\u{301}data: a\n\n", []),
            ("\u{FEFF}data: a\n\n", ["a"]), ("data\u{301}: a\n\ndata: b\n\n", ["b"]),
        ])
    func combiningMarks(text: String, expected: [String]) throws {
        #expect(try events(text).map(\.data) == expected)
    }

    @Test("After the byte stream fails, the cut line is dropped: next() ends, never returns it as whole")
    func cutLineDropped() async throws {
        let stream = scriptedStream(
            [Data("{\"n\":1}\n{\"n\":123".utf8)], thenThrow: TransportError(.connectionLost, url: nil, message: ""))
        var lines = stream.lines().makeAsyncIterator()
        #expect(try await lines.next() == "{\"n\":1}")
        await #expect(throws: TransportError.self) { _ = try await lines.next() }
        #expect(try await lines.next() == nil)

        struct Item: Decodable, Equatable { let n: Int }
        let again = scriptedStream(
            [Data("{\"n\":1}\n{\"n\":123".utf8)], thenThrow: TransportError(.connectionLost, url: nil, message: ""))
        var items = again.jsonLines(of: Item.self).makeAsyncIterator()
        #expect(try await items.next() == Item(n: 1))
        await #expect(throws: TransportError.self) { _ = try await items.next() }
        #expect(try await items.next() == nil)  // never {"n":123}, a number cut short
    }

    @Test("A JSON line that does not decode is named by its own number, when invalid UTF-8 follows in the chunk")
    func jsonLineNumber() async throws {
        struct Item: Decodable { let x: Int }
        let stream = HTTPByteStream.chunks([Data("{\"x\":1}\nnot json\n".utf8) + Data([0xFF, 0x0A])])
        var items = stream.jsonLines(of: Item.self).makeAsyncIterator()
        #expect(try await items.next()?.x == 1)
        await #expect {
            _ = try await items.next()
        } throws: { error in
            guard case StreamingError.undecodableLine(let line, _) = error else { return false }
            return line == 2
        }
        var splitter = LineSplitter()
        #expect(try splitter.push(Array("a\nb\n".utf8) + [0xFF, 0x0A]) == ["a", "b"])
        #expect(throws: StreamingError.invalidUTF8(line: 3)) { try splitter.push([]) }
        #expect(splitter.lineCount == 2)
    }

    @Test("A fault after good lines in one chunk is thrown once they are read, without waiting for the server")
    func faultNotDeferred() async throws {
        // A pull past the fault would wait 120 s; the bound leaves a starved run its stalls.
        let stream = scriptedStream([Data("ok\n".utf8) + Data(repeating: 0x61, count: 100)], hangSeconds: 120)
        var lines = stream.lines(maxLineBytes: 10).makeAsyncIterator()
        #expect(try await lines.next() == "ok")
        let started = Date()
        await #expect(throws: StreamingError.lineTooLong(limit: 10)) { _ = try await lines.next() }
        #expect(Date().timeIntervalSince(started) < 60)
        #expect(try await lines.next() == nil)
    }

    @Test("After a StreamingError the event source never reconnects: each later call throws it again")
    func noReconnectStorm() async throws {
        let connections = Locked(0)
        let clock = RecordingClock()
        let response = try eventStreamResponse()
        let source = EventSourceSequence(clock: clock.clock, maxLineBytes: 8) { _ in
            connections.withLock { $0 += 1 }
            return (HTTPByteStream.chunks([Data("data: far too long a line\n\n".utf8)]), response)
        }
        var iterator = source.makeAsyncIterator()
        for _ in 0..<5 {
            await #expect(throws: StreamingError.lineTooLong(limit: 8)) { _ = try await iterator.next() }
        }
        #expect(connections.current == 1)
        #expect(clock.recordedDelays.isEmpty)
    }

    @Test(
        "Only a 200 opens an event stream (WHATWG); any other status, 2xx included, fails it",
        arguments: [201, 202, 203, 206, 299])
    func only200Opens(status: Int) {
        var state = EventSourceState()
        #expect(
            state.opened(statusCode: status, contentType: "text/event-stream", randomUnit: 0)
                == .fail(.status(status)))
        var open = EventSourceState()
        #expect(open.opened(statusCode: 200, contentType: "text/event-stream; charset=utf-8", randomUnit: 0) == nil)
    }

    @Test(
        "The content type is what precedes the first ';': an empty one is refused",
        arguments: [";text/event-stream", " ;text/event-stream", "text/html;text/event-stream"])
    func emptyType(contentType: String) {
        var state = EventSourceState()
        #expect(
            state.opened(statusCode: 200, contentType: contentType, randomUnit: 0)
                == .fail(.unexpectedContentType(contentType)))
    }
}
