import Foundation

/// `Content-Length` as RFC 9112 §6.3 allows it: digits, or a list of identical values (which
/// is how repeated headers arrive once joined).
enum ContentLength {
    /// The length, or `nil` when the value is malformed or lists different lengths.
    static func parse(_ value: String) -> Int64? {
        // The common case, digits only, without Foundation (this runs for every response).
        var simple: Int64 = 0
        var digits = 0
        for byte in value.utf8 {
            guard (0x30...0x39).contains(byte) else {
                digits = -1
                break
            }
            let (times, overflow1) = simple.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - 0x30))
            if overflow1 || overflow2 { return nil }
            simple = sum
            digits += 1
        }
        if digits > 0 { return simple }
        var parsed: Int64?
        for member in value.split(separator: ",", omittingEmptySubsequences: false) {
            // Only spaces and tabs around a member (RFC 9110 OWS): `.whitespaces` also took
            // U+00A0 and U+3000, which no parser on the path agrees on.
            let digits = member.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(digits)
            else { return nil }
            if let parsed, parsed != number { return nil }
            parsed = number
        }
        return parsed
    }
}
