/// One fuzzer input, read front to back: fixed-size values first, then the rest as text.
///
/// Reading past the end gives zeros and empty values, so a target never has to check lengths.
struct FuzzInput {
    let bytes: [UInt8]
    private(set) var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isEmpty: Bool { index >= bytes.count }

    /// The whole input as text (invalid UTF-8 repaired).
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The next byte, or 0 at the end.
    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// A number in `0..<bound` from the next byte.
    mutating func choice(_ bound: Int) -> Int {
        Int(byte()) % max(1, bound)
    }

    /// A little-endian number from the next `width` bytes.
    mutating func integer(width: Int) -> UInt64 {
        var value: UInt64 = 0
        for shift in 0..<min(width, 8) { value |= UInt64(byte()) << UInt64(8 * shift) }
        return value
    }

    /// Bytes up to (not including) `separator`, or to the end.
    mutating func bytes(upTo separator: UInt8) -> [UInt8] {
        let start = index
        while index < bytes.count, bytes[index] != separator { index += 1 }
        let result = Array(bytes[start..<index])
        if index < bytes.count { index += 1 }
        return result
    }

    /// Text up to (not including) `separator`, or to the end.
    mutating func string(upTo separator: UInt8) -> String {
        String(decoding: bytes(upTo: separator), as: UTF8.self)
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { index = bytes.count }
        return index < bytes.count ? Array(bytes[index...]) : []
    }

    /// The unread bytes split into lines at `\n` (each line without it).
    mutating func lines() -> [String] {
        rest().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    }
}
