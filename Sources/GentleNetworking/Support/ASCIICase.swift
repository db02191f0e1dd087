extension String {
    /// Whether `self` and `other` are equal with ASCII letters compared case-insensitively, as
    /// HTTP field names are (RFC 9110 §5.1). Other bytes compare exactly.
    ///
    /// Byte-wise on contiguous UTF-8: `caseInsensitiveCompare` bridges to `NSString` and costs
    /// about a microsecond per call on Linux, on the path of every request.
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        // Lengths first (O(1) for native strings): most pairs compared differ in length, and
        // `==` on two strings costs a comparison routine call even when they do.
        guard utf8.count == other.utf8.count else { return false }
        var left = self
        var right = other
        return left.withUTF8 { a in
            right.withUTF8 { b in
                for index in a.indices where a[index] != b[index] {
                    // Equal once folded: letters differing only in bit 5 (0x20).
                    guard a[index] ^ b[index] == 0x20 else { return false }
                    let lower = a[index] | 0x20
                    guard lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return false }
                }
                return true
            }
        }
    }
}
