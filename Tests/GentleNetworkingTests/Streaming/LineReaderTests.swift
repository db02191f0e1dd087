import Foundation
import Testing

@testable import GentleNetworking

@Suite("LineReader: a chunk's lines are split a batch at a time, so memory for them stays bounded")
struct LineReaderTests {
    @Test("A 1 MiB chunk of line endings: every line comes out, never more than a batch split ahead")
    func chunkOfLineEndings() async throws {
        let count = 1 << 20
        // A chunk as one transport hands it over, then a line split across two more chunks, and
        // a CRLF split between the last two.
        let stream = HTTPByteStream.chunks([
            Data(repeating: 0x0A, count: count), Data("a\r\nbc\r".utf8), Data("\nd".utf8),
        ])
        var reader = LineReader(bytes: stream.makeAsyncIterator(), maxLineBytes: 64)
        var empty = 0
        var others: [String] = []
        var mostAhead = 0
        while let line = try await reader.next() {
            mostAhead = max(mostAhead, reader.linesAhead)
            if line.isEmpty { empty += 1 } else { others.append(line) }
        }
        #expect(empty == count)
        #expect(others == ["a", "bc", "d"])
        #expect(
            mostAhead < 4096, "lines split ahead of the consumer: \(mostAhead) (a batch is \(LineReader.linesPerBatch))"
        )
        #expect(reader.lineNumber == count + 3)
    }

    @Test("A fault after many lines in one chunk is thrown after them, and the lines before it all come out")
    func faultAfterManyLines() async throws {
        let stream = HTTPByteStream.chunks([Data(repeating: 0x0A, count: 1000) + Data(repeating: 0x61, count: 100)])
        var reader = LineReader(bytes: stream.makeAsyncIterator(), maxLineBytes: 64)
        var lines = 0
        do {
            while try await reader.next() != nil { lines += 1 }
            Issue.record("expected lineTooLong")
        } catch let error as StreamingError {
            #expect(error == .lineTooLong(limit: 64))
        }
        #expect(lines == 1000)
    }
}
