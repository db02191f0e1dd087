import Foundation
import Testing
import YNetwork

private struct Sample: Codable, Equatable {
    let userName: String
}

@Suite("JSONEncoder.defaultEncoder and JSONDecoder.defaultDecoder", .serialized)
struct DefaultCodersTests {
    @Test("defaultEncoder is a fresh pretty-printing encoder on every call")
    func encoder() throws {
        let first = JSONEncoder.defaultEncoder
        #expect(first !== JSONEncoder.defaultEncoder)
        #expect(first.outputFormatting == .prettyPrinted)
        first.outputFormatting = []
        #expect(JSONEncoder.defaultEncoder.outputFormatting == .prettyPrinted)
        let text = String(decoding: try JSONEncoder.defaultEncoder.encode(Sample(userName: "ada")), as: UTF8.self)
        #expect(text.contains("\n"))
    }

    @Test("defaultDecoder is one shared decoder; assigning one changes it for later factories")
    func decoder() throws {
        let original = JSONDecoder.defaultDecoder
        defer { JSONDecoder.defaultDecoder = original }
        #expect(JSONDecoder.defaultDecoder === original)

        // A plain decoder (other suites running meanwhile decode with the default one).
        let replacement = JSONDecoder()
        JSONDecoder.defaultDecoder = replacement
        #expect(JSONDecoder.defaultDecoder === replacement)
        #expect(JSONDataParserFactory().decoder === replacement)
    }

    @Test("JSONDataParserFactory() encodes with the default (pretty-printed) encoder, as in Y-Network")
    func factoryDefaults() throws {
        let data = try JSONDataParserFactory().encoder(for: .JSON)?.encode(Sample(userName: "ada"))
        #expect(data.map { String(decoding: $0, as: UTF8.self).contains("\n") } == true)
    }
}
