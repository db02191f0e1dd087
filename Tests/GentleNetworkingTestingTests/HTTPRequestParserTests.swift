import Foundation
import Testing

@testable import GentleNetworkingTesting

/// Regression tests for inputs the `request-parser` fuzz target found (Fuzz/Corpus/request-parser).
@Suite("HTTPRequestParser")
struct HTTPRequestParserTests {
    /// Parses a head from `text` and returns the parser, positioned at the body.
    private func parser(after text: String) throws -> HTTPRequestParser {
        var parser = HTTPRequestParser()
        parser.append(ArraySlice(Array(text.utf8)))
        _ = try #require(try parser.nextHead())
        return parser
    }

    @Test("A chunk size near Int.max is a malformed request, not an overflow trap")
    func chunkSizeOverflowIsMalformed() throws {
        // Given a chunked request whose chunk size is Int.max (fuzz input crash-chunk-size-overflow)
        var parser = try parser(
            after: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\nx\r\n0\r\n\r\n")
        // When the body is read, then the parser throws instead of trapping on `size + 2`
        #expect(throws: HTTPRequestParser.ParseError.self) { try parser.nextChunkedBody() }
    }

    @Test("A chunk size of Int.max - 2 waits for more bytes")
    func largestChunkSizeWaits() throws {
        var parser = try parser(after: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n7ffffffffffffffd\r\nx")
        #expect(try parser.nextChunkedBody() == nil)
    }

    @Test("A bare LF ends a header line, as nginx reads it: an injected field is recorded as its own")
    func bareLineFeed() throws {
        var parser = HTTPRequestParser()
        parser.append(ArraySlice(Array("GET /x HTTP/1.1\r\nX-A: v\nX-Injected: 1\r\nHost: h\r\n\r\n".utf8)))
        let head = try #require(try parser.nextHead())
        #expect(head.headers.map(\.name) == ["X-A", "X-Injected", "Host"])
        #expect(head.header("X-A") == "v")
        #expect(head.header("X-Injected") == "1")
        #expect(head.target == "/x")
    }

    @Test("A normal chunked body still parses")
    func chunkedBodyParses() throws {
        var parser = try parser(
            after: "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n0\r\n\r\n")
        #expect(try parser.nextChunkedBody() == Data("hello world".utf8))
    }
}
