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

@Suite("A URL's port is 1-65535, or the request is refused before sending")
struct URLPortValidationTests {
    @Test(
        "Ports 0, 65536, 99999 and 123456: .invalidRequest on every transport; 65535 and the IPv6 form pass the check")
    func ports() async throws {
        for kind in TransportKind.all {
            let transport = try kind.make()
            for port in ["0", "65536", "99999", "123456"] {
                let url = try #require(URL(string: "http://127.0.0.1:\(port)/x"))
                do {
                    _ = try await transport.data(for: URLRequest(url: url))
                    Issue.record("\(kind) \(port): sent")
                } catch let error as TransportError {
                    #expect(error.code == .invalidRequest, "\(kind) \(port): \(error)")
                }
            }
        }
        for valid in ["http://127.0.0.1:65535/x", "http://[::1]:8080/x", "http://h.example/x", "https://h.example:1/"] {
            #expect(throws: Never.self, "\(valid)") {
                try RequestValidator.validateURL(try #require(URL(string: valid)))
            }
        }
    }
}
