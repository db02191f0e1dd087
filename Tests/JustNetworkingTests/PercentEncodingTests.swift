import Foundation
import GentleNetworking
import Testing

/// The shared percent-encoder against a plain byte-by-byte reference, for every byte value and
/// the escape edge cases, in every variant the three modules use.
@Suite("PercentEncoding: one encoder, every module's output unchanged")
struct PercentEncodingTests {
    private static func reference(_ string: String, keep: (UInt8) -> Bool, escapes: Bool, plus: Bool) -> String {
        let bytes = Array(string.utf8)
        var out = ""
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            let isHex = { (b: UInt8) in (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
            }
            if keep(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else if escapes, byte == 0x25, index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) {
                out += String(decoding: bytes[index...index + 2], as: UTF8.self)
                index += 2
            } else if plus, byte == 0x20 {
                out += "+"
            } else {
                out += String(format: "%%%02X", byte)
            }
            index += 1
        }
        return out
    }

    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    private static let path = unreserved.union("!$&'()*+,;=:@/".utf8)

    private static var samples: [String] {
        var samples = (0..<256).map { String(Unicode.Scalar(UInt8($0))) }
        samples += [
            "", "a b+c&d=e", "%", "%2", "%20", "%2g", "%%41", "x%zz%41y", "ü€😀", "/p/a th/%7E?#", "end%", "end%4",
            "\r\n\0", String(repeating: "abc-", count: 100),
        ]
        return samples
    }

    @Test("Query component, form component (+ and %20), path and literal path match the reference")
    func matchesReference() {
        for sample in Self.samples {
            #expect(
                PercentEncoding.queryComponent(sample)
                    == Self.reference(sample, keep: Self.unreserved.contains, escapes: false, plus: false))
            #expect(
                PercentEncoding.formComponent(sample, spaceAsPlus: true)
                    == Self.reference(sample, keep: Self.unreserved.contains, escapes: false, plus: true))
            #expect(
                PercentEncoding.formComponent(sample, spaceAsPlus: false)
                    == Self.reference(sample, keep: Self.unreserved.contains, escapes: false, plus: false))
            #expect(
                PercentEncoding.path(sample)
                    == Self.reference(sample, keep: Self.path.contains, escapes: true, plus: false))
            #expect(
                PercentEncoding.literalPath(sample)
                    == Self.reference(sample, keep: Self.path.contains, escapes: false, plus: false))
        }
    }

    @Test("The core's EndpointRequestBuilder encoders are the shared ones")
    func coreUsesShared() {
        for sample in Self.samples {
            #expect(
                EndpointRequestBuilder.percentEncodeQueryComponent(sample) == PercentEncoding.queryComponent(sample))
            #expect(EndpointRequestBuilder.percentEncodePath(sample) == PercentEncoding.path(sample))
        }
    }
}
