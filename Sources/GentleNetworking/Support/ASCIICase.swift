extension StringProtocol {
    /// Whether `self` and `other` are equal with ASCII letters compared case-insensitively, as
    /// HTTP field names are (RFC 9110 §5.1). Other bytes compare exactly.
    ///
    /// Byte-wise on the UTF-8 views: `caseInsensitiveCompare` bridges to `NSString` and costs
    /// about a microsecond per call on Linux, on the path of every request.
    func equalsIgnoringASCIICase<Other: StringProtocol>(_ other: Other) -> Bool {
        let left = utf8
        let right = other.utf8
        guard left.count == right.count else { return false }
        for (a, b) in zip(left, right) where a != b {
            // Equal once folded: letters differing only in bit 5 (0x20).
            guard a ^ b == 0x20 else { return false }
            let lower = a | 0x20
            guard lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return false }
        }
        return true
    }
}
