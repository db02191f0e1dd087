import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds the boundary's delimiter (`--` and the boundary) in a part's bytes, given whole or in
/// pieces: an occurrence split across two pieces is found too.
///
/// A part holding the delimiter would end itself early when the server parses the body, and
/// what follows would be read as parts of its own (`--b` CRLF `Content-Disposition: …; name="role"`
/// CRLF CRLF `admin`): the builder refuses such a part rather than send parts nobody added.
struct BoundaryScanner {
    private let delimiter: [UInt8]
    /// The last `delimiter.count - 1` bytes seen, where an occurrence split across pieces starts.
    private var tail: [UInt8] = []

    init(boundary: String) {
        delimiter = Array("--\(boundary)".utf8)
    }

    /// Whether `bytes`, after the pieces given before, complete an occurrence of the delimiter.
    mutating func isFound(in bytes: Data) -> Bool {
        let keep = delimiter.count - 1
        if !tail.isEmpty {
            // Occurrences that start in the tail and end in `bytes`.
            if Self.contains(tail + bytes.prefix(keep), delimiter) { return true }
        }
        if Self.contains(bytes, delimiter) { return true }
        tail = Array((tail + bytes).suffix(keep))
        return false
    }

    /// Throws ``MultipartError/invalidBoundary(_:)`` unless `boundary` is one RFC 2046 §5.1.1
    /// allows: 1 to 70 `bchars` (letters, digits, `'()+_,-./:=?` and space), not ending in a
    /// space.
    static func validate(_ boundary: String) throws {
        let bytes = boundary.utf8
        let allowed = bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"):
                true
            default:
                "'()+_,-./:=? ".utf8.contains(byte)
            }
        }
        guard allowed, (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else {
            throw MultipartError.invalidBoundary(boundary)
        }
    }

    /// Whether `data` holds the delimiter of `boundary` anywhere.
    static func contains(_ data: Data, boundary: String) -> Bool {
        contains(data, Array("--\(boundary)".utf8))
    }

    private static func contains(_ haystack: some ContiguousBytes, _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { stack in
            needle.withUnsafeBytes { pattern in
                guard let stackStart = stack.baseAddress, let patternStart = pattern.baseAddress,
                    let first = needle.first, stack.count >= pattern.count
                else { return false }
                // Each candidate start found with `memchr`, then compared whole.
                let lastStart = stack.count - pattern.count
                var offset = 0
                while offset <= lastStart {
                    guard let hit = memchr(stackStart + offset, Int32(first), lastStart - offset + 1) else {
                        return false
                    }
                    let start = stackStart.distance(to: UnsafeRawPointer(hit))
                    if memcmp(stackStart + start, patternStart, pattern.count) == 0 { return true }
                    offset = start + 1
                }
                return false
            }
        }
    }
}
