import Foundation
import Testing

@testable import GentleNetworking

/// `Content-Length` as RFC 9112 §6.3 allows it, and nothing looser.
@Suite("ContentLength.parse")
struct ContentLengthTests {
    @Test("Digits, and lists of one value with spaces or tabs around them")
    func accepted() {
        #expect(ContentLength.parse("27") == 27)
        #expect(ContentLength.parse("27, 27") == 27)
        #expect(ContentLength.parse(" 27 ,\t27") == 27)
    }

    @Test("Other whitespace (U+00A0, U+3000), different values, signs and overflow are malformed")
    func refused() {
        for value in ["27\u{3000}", "27\u{00A0}", "\u{3000}27, 27", "27, 47", "-1", "+5", "99999999999999999999", ""] {
            #expect(ContentLength.parse(value) == nil, "\(value.unicodeScalars.map { $0.value })")
        }
    }
}
