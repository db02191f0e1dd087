/// The one percent-encoder of GentleNetworking, JustNetworking and YNetwork: it works on UTF-8
/// bytes, writes upper-case `%XX`, and returns the string itself when nothing needs encoding.
///
/// Variants:
/// - ``queryComponent(_:)``: everything but RFC 3986 unreserved characters is encoded (`&`,
///   `=`, `+`, `%`, space and non-ASCII included).
/// - ``formComponent(_:spaceAsPlus:)``: the same, with a space as `+` or `%20`.
/// - ``path(_:)``: keeps unreserved characters, sub-delims, `:`, `@`, `/` and existing `%XX`
///   escapes, so a pre-encoded path is not encoded twice; ``query(_:)`` the same and `?`.
/// - ``literalPath(_:)``: the same characters kept, but `%` always encoded: text taken as a
///   path, all of it (`?`, `#` and `%` included), as `URL.appendingPathComponent` takes it.
package enum PercentEncoding {
    /// A set of ASCII bytes, as two 64-bit masks; bytes of 128 and above are never in it.
    package struct ByteSet: Sendable {
        private let low: UInt64
        private let high: UInt64

        /// The set of the ASCII bytes `members` gives, plus the ranges.
        package init(_ members: String, ranges: [ClosedRange<UInt8>] = []) {
            var low: UInt64 = 0
            var high: UInt64 = 0
            var all = Array(members.utf8)
            for range in ranges { all.append(contentsOf: range) }
            for byte in all where byte < 128 {
                if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
            }
            self.low = low
            self.high = high
        }

        /// Whether `byte` is in the set.
        @inline(__always)
        package func contains(_ byte: UInt8) -> Bool {
            byte < 64 ? low & (1 << UInt64(byte)) != 0 : byte < 128 && high & (1 << UInt64(byte &- 64)) != 0
        }
    }

    /// RFC 3986 unreserved: `A-Z a-z 0-9 - . _ ~`.
    package static let unreserved = ByteSet(
        "-._~",
        ranges: [
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
        ])
    /// Unreserved, sub-delims, `:`, `@` and `/`: what a path holds as it is.
    package static let pathCharacters = ByteSet(
        "-._~!$&'()*+,;=:@/",
        ranges: [
            UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        ])
    /// A query name or value: everything but unreserved characters encoded.
    package static func queryComponent(_ string: String) -> String {
        encode(string, keeping: unreserved, keepingEscapes: false, spaceAsPlus: false)
    }

    /// A form-urlencoded name or value: as ``queryComponent(_:)``, with a space as `+` when
    /// `spaceAsPlus` is `true` (`application/x-www-form-urlencoded`), else as `%20`.
    package static func formComponent(_ string: String, spaceAsPlus: Bool) -> String {
        encode(string, keeping: unreserved, keepingEscapes: false, spaceAsPlus: spaceAsPlus)
    }

    /// A path (segments and their `/`): existing `%XX` escapes are kept.
    package static func path(_ string: String) -> String {
        encode(string, keeping: pathCharacters, keepingEscapes: true, spaceAsPlus: false)
    }

    /// Unreserved, sub-delims, `:`, `@`, `/` and `?`: what a query holds as it is.
    package static let queryCharacters = ByteSet(
        "-._~!$&'()*+,;=:@/?",
        ranges: [
            UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
        ])

    /// A whole query written by hand (`lang=fr-ç&sort=asc`): `&` and `=` stay, as do existing
    /// `%XX` escapes; spaces, non-ASCII, `#` and other bytes a query cannot hold are encoded.
    /// Left to `URL(string:)`, such a query was "repaired" whole on Linux, `%` included, so the
    /// parameters encoded next to it arrived encoded twice (`new%2520york`).
    package static func query(_ string: String) -> String {
        encode(string, keeping: queryCharacters, keepingEscapes: true, spaceAsPlus: false)
    }

    /// Text that is a path and nothing else: what ``path(_:)`` encodes, and `%` too, so `?`,
    /// `#` and `%XX` in it stay characters of the path (`a?b` → `a%3Fb`, `a%2Fb` → `a%252Fb`),
    /// as `URL.appendingPathComponent` encodes them.
    package static func literalPath(_ string: String) -> String {
        encode(string, keeping: pathCharacters, keepingEscapes: false, spaceAsPlus: false)
    }

    /// Encodes every byte of `string` not in `kept` as `%XX`; with `keepingEscapes`, a `%`
    /// followed by two hex digits is copied as it is; with `spaceAsPlus`, a space is `+`.
    package static func encode(
        _ string: String, keeping kept: ByteSet, keepingEscapes: Bool, spaceAsPlus: Bool
    ) -> String {
        var string = string
        return string.withUTF8 { bytes -> String? in
            // Fast path: nothing to encode.
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if kept.contains(byte) {
                    index += 1
                } else if keepingEscapes, isEscape(bytes, at: index) {
                    index += 3
                } else {
                    break
                }
            }
            guard index < bytes.count else { return nil }
            var output = [UInt8]()
            output.reserveCapacity(bytes.count + 16)
            output.append(contentsOf: bytes[0..<index])
            while index < bytes.count {
                let byte = bytes[index]
                if kept.contains(byte) {
                    output.append(byte)
                } else if keepingEscapes, isEscape(bytes, at: index) {
                    output.append(contentsOf: bytes[index...index + 2])
                    index += 2
                } else if spaceAsPlus, byte == UInt8(ascii: " ") {
                    output.append(UInt8(ascii: "+"))
                } else {
                    output.append(UInt8(ascii: "%"))
                    output.append(hexDigit(byte >> 4))
                    output.append(hexDigit(byte & 0x0F))
                }
                index += 1
            }
            return String(decoding: output, as: UTF8.self)
        } ?? string
    }

    /// The first `.` or `..` segment of an encoded path, as a server may read it, or `nil`.
    ///
    /// libcurl, URLSession and servers resolve such segments (RFC 3986 §5.2.4), so
    /// `files/\(name)` with `../../admin` would leave the environment's base path, with its
    /// credentials. Servers also decode `%2E`, split at `%2F`, `%5C` and `\`, and drop a segment's
    /// `;parameters` (`..;` on Tomcat): a segment counts as dots after all of that. One pass over
    /// the bytes, without allocating: this runs for every request.
    package static func dotSegment(in path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes -> String? in
            var dots = 0
            var other = false
            var inParameters = false
            var index = 0
            func endOfSegment() -> String? {
                defer { (dots, other, inParameters) = (0, false, false) }
                return !other && (dots == 1 || dots == 2) ? String(repeating: ".", count: dots) : nil
            }
            while index < bytes.count {
                var byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "%"), index + 1 < bytes.count {
                    let high = hexValue(bytes[index])
                    let low = hexValue(bytes[index + 1])
                    if let high, let low {
                        byte = high << 4 | low
                        index += 2
                        if byte != UInt8(ascii: ".") && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "\\") {
                            byte = UInt8(ascii: "x")  // any other escape is an ordinary character here
                        }
                    }
                }
                switch byte {
                case UInt8(ascii: "/"), UInt8(ascii: "\\"):
                    if let found = endOfSegment() { return found }
                case _ where inParameters:
                    continue
                case UInt8(ascii: ";"):
                    inParameters = true
                case UInt8(ascii: "."):
                    dots += 1
                default:
                    other = true
                }
            }
            return endOfSegment()
        }
    }

    /// The value of a hexadecimal digit, or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    @inline(__always)
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "A") &+ (value &- 10)
    }

    @inline(__always)
    private static func isEscape(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        bytes[index] == UInt8(ascii: "%") && index + 2 < bytes.count && isHexDigit(bytes[index + 1])
            && isHexDigit(bytes[index + 2])
    }

    @inline(__always)
    private static func isHexDigit(_ byte: UInt8) -> Bool {
        hexValue(byte) != nil
    }
}
