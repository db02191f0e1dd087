import Foundation
import GentleNetworking
import Testing

@Suite("JSONLinesDecoder: one Decodable per line, errors naming the line")
struct JSONLinesDecoderTests {
    struct Token: Decodable, Equatable {
        let index: Int
        let text: String
    }

    func decodeAll(_ text: String, cuts: [Int] = []) throws -> [Token] {
        let bytes = Array(text.utf8)
        var splitter = LineSplitter()
        let decoder = JSONLinesDecoder<Token>()
        var tokens: [Token] = []
        var start = 0
        for cut in cuts + [bytes.count] {
            for line in try splitter.push(bytes[start..<cut]) {
                if let token = try decoder.decode(line, number: splitter.lineCount) { tokens.append(token) }
            }
            start = cut
        }
        if let line = try splitter.finish(), let token = try decoder.decode(line, number: splitter.lineCount) {
            tokens.append(token)
        }
        return tokens
    }

    @Test("Every split point gives the same elements; blank lines and a missing final newline are fine")
    func splits() throws {
        let text = "{\"index\":0,\"text\":\"Hé\"}\r\n\n  \n{\"index\":1,\"text\":\"llo\"}\n{\"index\":2,\"text\":\"✓\"}"
        let expected = [Token(index: 0, text: "Hé"), Token(index: 1, text: "llo"), Token(index: 2, text: "✓")]
        for cut in 0...text.utf8.count {
            #expect(try decodeAll(text, cuts: [cut]) == expected, "cut at \(cut)")
        }
    }

    @Test("A line that does not decode names its number, the path and the reason, never its text")
    func failures() throws {
        let text = "{\"index\":0,\"text\":\"a\"}\n\n{\"index\":\"secret-value\",\"text\":\"b\"}\n"
        do {
            _ = try decodeAll(text)
            Issue.record("expected a failure")
        } catch let StreamingError.undecodableLine(line, message) {
            #expect(line == 3)
            #expect(message.contains("index"), "\(message)")
            #expect(!message.contains("secret-value"), "\(message)")
        }
        #expect(throws: StreamingError.self) { try decodeAll("not json\n") }
        do {
            _ = try decodeAll("{\"index\":1}\n")
            Issue.record("expected a failure")
        } catch let StreamingError.undecodableLine(line, message) {
            #expect(line == 1)
            #expect(message.contains("text"), "the missing key is named: \(message)")
        }
    }
}
