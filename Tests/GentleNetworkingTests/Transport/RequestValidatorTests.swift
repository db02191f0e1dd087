import Foundation
import GentleNetworking
import Testing

@Suite("RequestValidator: header names are RFC 9110 tokens; values carry no CR, LF or NUL")
struct RequestValidatorTests {
    @Test("Token names pass; an empty name, a separator, a control byte or a non-ASCII byte anywhere fails")
    func names() {
        for name in ["X-Note", "Authorization", "a", "!#$%&'*+-.^_`|~09AZaz", String(repeating: "x", count: 300)] {
            #expect(RequestValidator.isValidHeaderName(name), "\(name)")
        }
        for name in [
            "", " X", "X ", "X:Y", "X-Note\r\nX-Injected: 1", "\nX", "X\r", "X\u{0}", "Naïve", "X(Y)", "X\"",
            String(repeating: "x", count: 300) + "\n",
        ] {
            #expect(!RequestValidator.isValidHeaderName(name), "\(name.debugDescription)")
        }
    }

    @Test("Values pass unless they hold CR, LF or NUL, at the start, in the middle or at the end")
    func values() {
        for value in ["", "Bearer abc", "naïve ✓", "\t tab and spaces ", String(repeating: "v", count: 1000)] {
            #expect(RequestValidator.isValidHeaderValue(value), "\(value)")
        }
        for value in ["\rx", "x\ny", "x\u{0}", "a\r\nX-Injected: 1", String(repeating: "v", count: 1000) + "\n"] {
            #expect(!RequestValidator.isValidHeaderValue(value), "\(value.debugDescription)")
        }
    }

    @Test("Strings not stored as contiguous UTF-8 (bridged from NSString) are judged the same")
    func bridged() {
        let name = NSString(string: "X-Note\r\nX-Injected: 1") as String
        let value = NSString(string: "ok\u{0}") as String
        #expect(!RequestValidator.isValidHeaderName(name))
        #expect(!RequestValidator.isValidHeaderValue(value))
        #expect(RequestValidator.isValidHeaderName(NSString(string: "X-Note") as String))
        #expect(RequestValidator.isValidHeaderValue(NSString(string: "naïve ✓") as String))
    }
}
