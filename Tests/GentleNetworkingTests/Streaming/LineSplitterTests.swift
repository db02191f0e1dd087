import Foundation
import GentleNetworking
import Testing

@Suite("LineSplitter: UTF-8 lines from a byte stream, wherever the chunks break")
struct LineSplitterTests {
    /// Splits `bytes` at `cuts` (offsets), feeds the pieces, and finishes.
    func lines(_ bytes: [UInt8], cuts: [Int], maxLineBytes: Int = 64) throws -> [String] {
        var splitter = LineSplitter(maxLineBytes: maxLineBytes)
        var result: [String] = []
        var start = 0
        for cut in cuts + [bytes.count] {
            result += try splitter.push(bytes[start..<cut])
            start = cut
        }
        if let last = try splitter.finish() { result.append(last) }
        return result
    }

    @Test("LF, CRLF and CR all end a line, for every split point of the input and byte by byte")
    func everySplit() throws {
        let text = "one\ntwo\r\nthree\rfour\r\n\r\nsix é✓\n\rlast"
        let expected = ["one", "two", "three", "four", "", "six é✓", "", "last"]
        let bytes = Array(text.utf8)
        for cut in 0...bytes.count {
            #expect(try lines(bytes, cuts: [cut]) == expected, "cut at \(cut)")
        }
        for first in 0...bytes.count {
            for second in first...bytes.count where (second - first) % 3 == 0 {
                #expect(try lines(bytes, cuts: [first, second]) == expected, "cuts at \(first), \(second)")
            }
        }
        #expect(try lines(bytes, cuts: Array(1..<bytes.count)) == expected)
    }

    @Test("A CR at the end of a chunk waits for the next: CR+LF across chunks is one terminator")
    func carriageReturnAtChunkEnd() throws {
        var splitter = LineSplitter()
        #expect(try splitter.push(Array("a\r".utf8)) == ["a"])
        #expect(try splitter.push(Array("\nb\r".utf8)) == ["b"])
        #expect(try splitter.push(Array("\r".utf8)) == [""])
        #expect(try splitter.finish() == nil)
        #expect(splitter.lineCount == 3)
    }

    @Test("A multi-byte character split across chunks is one character")
    func multiByteSplit() throws {
        let bytes = Array("naïve 🦒\n".utf8)
        for cut in 0...bytes.count {
            #expect(try lines(bytes, cuts: [cut]) == ["naïve 🦒"])
        }
    }

    @Test("A line longer than the limit throws as soon as the limit is passed; one at the limit is fine")
    func lineLimit() throws {
        #expect(try lines(Array((String(repeating: "x", count: 8) + "\n").utf8), cuts: [], maxLineBytes: 8).count == 1)
        var splitter = LineSplitter(maxLineBytes: 8)
        #expect(throws: StreamingError.lineTooLong(limit: 8)) {
            _ = try splitter.push(Array(repeating: UInt8(ascii: "x"), count: 9))
        }
        // Endless input without a terminator never grows past the limit.
        var endless = LineSplitter(maxLineBytes: 1024)
        var thrown: StreamingError?
        do {
            for _ in 0..<10_000 { _ = try endless.push(Array(repeating: UInt8(ascii: "y"), count: 100)) }
        } catch {
            thrown = error
        }
        #expect(thrown == .lineTooLong(limit: 1024))
    }

    @Test("Invalid UTF-8 names the line; the bytes before it still came out as lines")
    func invalidUTF8() throws {
        var splitter = LineSplitter()
        #expect(try splitter.push(Array("ok\n".utf8)) == ["ok"])
        #expect(throws: StreamingError.invalidUTF8(line: 2)) { _ = try splitter.push([0x61, 0xC3, 0x28, 0x0A]) }
        var truncated = LineSplitter()
        _ = try truncated.push([0xE2, 0x9C])  // the first two bytes of ✓, then the end
        #expect(throws: StreamingError.invalidUTF8(line: 1)) { _ = try truncated.finish() }
    }

    @Test("Lines before a fault come out first; the fault follows on the next call, and on every call after")
    func linesBeforeFault() throws {
        var splitter = LineSplitter(maxLineBytes: 4)
        #expect(try splitter.push(Array("ab\ncd\ntoo long".utf8)) == ["ab", "cd"])
        #expect(throws: StreamingError.lineTooLong(limit: 4)) { _ = try splitter.push(Array("x\n".utf8)) }
        #expect(throws: StreamingError.lineTooLong(limit: 4)) { _ = try splitter.finish() }
        var invalid = LineSplitter()
        #expect(try invalid.push([0x61, 0x0A, 0xFF, 0x0A, 0x62, 0x0A]) == ["a"])
        #expect(throws: StreamingError.invalidUTF8(line: 2)) { _ = try invalid.push([]) }
    }

    @Test("NUL and other control bytes are kept; a limit below 1 counts as 1")
    func edges() throws {
        #expect(try lines([0x61, 0x00, 0x62, 0x0A], cuts: []) == ["a\u{0}b"])
        #expect(LineSplitter(maxLineBytes: -5).maxLineBytes == 1)
        var splitter = LineSplitter()
        #expect(!splitter.hasPartialLine)
        _ = try splitter.push(Array("par".utf8))
        #expect(splitter.hasPartialLine)
    }
}
