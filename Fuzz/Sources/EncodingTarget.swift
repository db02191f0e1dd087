import Foundation

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The percent-encoder of all three modules and the request validator: cheap, and every
/// request goes through them.
///
/// Input: the whole input as text (and, for the validator, split at the first `\n` into a
/// header name and value, and tried as a URL).
///
/// Asserts: no trap; query and form components hold only unreserved characters and `%XX`, and
/// decode back to the input; path and URL-text encoding keep valid escapes, are idempotent and
/// only hold characters allowed there; the validator accepts exactly the RFC 9110 tokens and
/// the values without CR, LF or NUL, and its error never quotes the value; its fast URL check
/// agrees with Foundation's scheme and host.
enum EncodingTarget {
    static let tokenCharacters = Set(
        "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)

    static func run(_ input: FuzzInput) {
        let text = input.text
        encoding(text)
        var reader = input
        let name = reader.string(upTo: UInt8(ascii: "\n"))
        let value = String(decoding: reader.rest(), as: UTF8.self)
        validation(name: name, value: value)
        urls(text)
    }

    /// The bytes `text` percent-decodes to; `nil` for a malformed escape. Byte for byte, unlike
    /// Foundation's `removingPercentEncoding`, which drops a leading byte order mark (`%EF%BB%BF`
    /// decoded to "": a false alarm of the CI run of 2026-12-02).
    static func percentDecoded(_ text: String) -> [UInt8]? {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) else {
                    return nil
                }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }

    static func encoding(_ text: String) {
        let query = PercentEncoding.queryComponent(text)
        if !onlyKept(query, PercentEncoding.unreserved) { violated("query component \(query.debugDescription)") }
        if percentDecoded(query) != Array(text.utf8) {
            violated("\(query.debugDescription) does not decode to the input")
        }
        let form = PercentEncoding.formComponent(text, spaceAsPlus: true)
        if !onlyKept(form.replacingOccurrences(of: "+", with: ""), PercentEncoding.unreserved) {
            violated("form component \(form.debugDescription)")
        }
        if percentDecoded(form.replacingOccurrences(of: "+", with: " ")) != Array(text.utf8) {
            violated("\(form.debugDescription) does not decode to the input")
        }
        if PercentEncoding.formComponent(text, spaceAsPlus: false) != query { violated("%20 form differs from query") }
        for (encoded, kept) in [
            (PercentEncoding.path(text), PercentEncoding.pathCharacters),
            (PercentEncoding.literalPath(text), PercentEncoding.pathCharacters),
        ] {
            if !onlyKept(encoded, kept) { violated("\(encoded.debugDescription) holds a character it may not") }
        }
        let path = PercentEncoding.path(text)
        if PercentEncoding.path(path) != path { violated("path encoding is not idempotent: \(path.debugDescription)") }
        // A literal path keeps no escape of the input: it decodes to the input exactly (`%`,
        // `?` and `#` included), as `appendingPathComponent` encodes a path.
        let literal = PercentEncoding.literalPath(text)
        if percentDecoded(literal) != Array(text.utf8) {
            violated("\(literal.debugDescription) does not decode to the input")
        }
        if path.removingPercentEncoding != text.removingPercentEncoding, text.removingPercentEncoding != nil {
            violated("path encoding changed the decoded text of \(text.debugDescription)")
        }
    }

    /// Whether every byte is in `kept` or part of a `%XX` escape.
    static func onlyKept(_ text: String, _ kept: PercentEncoding.ByteSet) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if kept.contains(bytes[index]) {
                index += 1
            } else if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                bytes[(index + 1)...(index + 2)].allSatisfy({ $0.isHexDigit })
            {
                index += 3
            } else {
                return false
            }
        }
        return true
    }

    static func validation(name: String, value: String) {
        let validName = !name.utf8.isEmpty && name.utf8.allSatisfy { tokenCharacters.contains($0) }
        let validValue = !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
        if RequestValidator.isValidHeaderName(name) != validName { violated("name \(name.debugDescription)") }
        if RequestValidator.isValidHeaderValue(value) != validValue { violated("value \(value.debugDescription)") }
        let marked = value + "QQQQQQQQ"
        do {
            try RequestValidator.validateHeader(name: name, value: marked, url: nil)
            if !validName || !validValue { violated("an invalid header passed") }
        } catch {
            if validName, validValue { violated("a valid header failed: \(error)") }
            if error.code != .invalidRequest { violated("code \(error.code)") }
            if !name.contains("QQQQQQQQ"), error.description.contains("QQQQQQQQ") {
                violated("the error quotes the value")
            }
        }
    }

    static func urls(_ text: String) {
        guard let url = URL(string: text) else { return }
        let fast = RequestValidator.isHTTPURLWithHost(url.absoluteString)
        let scheme = url.scheme?.lowercased()
        // A port, when Foundation reads one, must be 1-65535 (the validator refuses the rest).
        let slow =
            (scheme == "http" || scheme == "https") && url.host?.isEmpty == false
            && url.port.map { (1...65_535).contains($0) } != false
        var validated = true
        do { try RequestValidator.validateURL(url) } catch { validated = false }
        if validated != slow && !(fast && !slow) {
            violated("validateURL(\(text.debugDescription)) = \(validated), Foundation says \(slow)")
        }
        // A percent-encoded host is a valid reg-name (RFC 3986 §3.2.2), but Foundation gives no
        // host when the escapes are not UTF-8 ("http://%CC~"): such a request fails later, with
        // cannotResolveHost, so only hosts without escapes are held to Foundation's answer.
        if fast, !slow, !url.absoluteString.contains("%") {
            violated("the fast check accepts \(text.debugDescription), which has no http(s) host")
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
