import Foundation

/// A compression bomb generated on the fly: a valid DEFLATE stream (RFC 1951) that inflates to
/// `decodedBytes` zero bytes, optionally wrapped as gzip (RFC 1952) or zlib (RFC 1950).
///
/// The stream is one final block with the fixed Huffman codes (RFC 1951 §3.2.6): one literal
/// `0x00`, then back-references of length 258 at distance 1 (13 bits each, so about 159 decoded
/// bytes per compressed byte), a shorter match or literals for the remainder, and end-of-block.
/// Nothing is materialised: ``nextChunk(maxBytes:)`` produces the compressed bytes piece by
/// piece, and the trailer's CRC-32 and Adler-32 of `decodedBytes` zeros are computed in
/// logarithmic time, so even a terabyte bomb ends with a correct trailer at once.
package struct DeflateBomb {
    /// How the raw DEFLATE stream is wrapped.
    package enum Framing: Sendable {
        /// A 10-byte gzip header; the trailer is the CRC-32 and the length modulo 2³².
        case gzip
        /// A 2-byte zlib header; the trailer is the Adler-32 (what HTTP calls `deflate`).
        case zlib
        /// The bare DEFLATE stream, with no header or trailer.
        case raw
    }

    private enum Phase {
        case header, blockStart, literal, matches, remainder, endOfBlock, trailer, done
    }

    /// How many zero bytes the stream inflates to.
    package let decodedBytes: Int64
    /// The wrapping.
    package let framing: Framing
    private var phase = Phase.header
    private var remainingMatches: Int64
    private let remainderLength: Int
    private var bits = BitWriter()

    /// A bomb that inflates to `decodedBytes` zeros (a negative count counts as 0).
    package init(decodedBytes: Int64, framing: Framing) {
        let count = max(0, decodedBytes)
        self.decodedBytes = count
        self.framing = framing
        let afterLiteral = max(0, count - 1)
        self.remainingMatches = afterLiteral / 258
        self.remainderLength = Int(afterLiteral % 258)
    }

    /// The exact number of bytes the whole stream takes, header and trailer included, known
    /// before any is generated (so it can be sent as `Content-Length`).
    package var compressedByteCount: Int64 {
        var bitCount: Int64 = 3 + 7  // block header and end-of-block
        if decodedBytes > 0 {
            bitCount += 8
            let afterLiteral = decodedBytes - 1
            bitCount += (afterLiteral / 258) * 13
            bitCount += Int64(Self.remainderBitCount(Int(afterLiteral % 258)))
        }
        let deflateBytes = (bitCount + 7) / 8
        switch framing {
        case .gzip: return 10 + deflateBytes + 8
        case .zlib: return 2 + deflateBytes + 4
        case .raw: return deflateBytes
        }
    }

    /// Whether every byte has been produced.
    package var isFinished: Bool { phase == .done }

    /// The next piece of the stream, about `maxBytes` long (a few bytes more at most), or `nil`
    /// once the stream is complete.
    package mutating func nextChunk(maxBytes: Int = 64 * 1024) -> [UInt8]? {
        guard phase != .done else { return nil }
        let limit = max(16, maxBytes)
        bits.output.reserveCapacity(limit + 16)
        while bits.output.count < limit && phase != .done {
            step(room: limit - bits.output.count)
        }
        let chunk = bits.output
        bits.output.removeAll(keepingCapacity: true)
        return chunk
    }

    private mutating func step(room: Int) {
        switch phase {
        case .header:
            switch framing {
            case .gzip:
                // ID1 ID2, CM = deflate, no flags, no mtime, no extra flags, OS unknown.
                bits.output.append(contentsOf: [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF])
            case .zlib:
                // CM 8 with a 32 KiB window; FLG makes the pair a multiple of 31.
                bits.output.append(contentsOf: [0x78, 0x01])
            case .raw:
                break
            }
            phase = .blockStart
        case .blockStart:
            bits.write(1, count: 1)  // BFINAL
            bits.write(1, count: 2)  // BTYPE 01: fixed Huffman codes
            phase = decodedBytes > 0 ? .literal : .endOfBlock
        case .literal:
            Self.writeLiteralZero(&bits)
            phase = .matches
        case .matches:
            if remainingMatches == 0 {
                phase = .remainder
            } else if bits.pendingBitCount == 0 && remainingMatches >= 8 {
                // Byte-aligned: eight matches are exactly 13 bytes, always the same ones.
                let groups = min(remainingMatches / 8, Int64(Self.groupsPerRun), Int64(max(1, room / 13)))
                bits.output.append(contentsOf: Self.groupRun[0..<Int(groups) * 13])
                remainingMatches -= groups * 8
            } else {
                Self.writeMatch(length: 258, into: &bits)
                remainingMatches -= 1
            }
        case .remainder:
            if remainderLength >= 3 {
                Self.writeMatch(length: remainderLength, into: &bits)
            } else {
                for _ in 0..<remainderLength { Self.writeLiteralZero(&bits) }
            }
            phase = .endOfBlock
        case .endOfBlock:
            bits.writeHuffman(0, length: 7)  // symbol 256
            bits.flushToByte()
            phase = .trailer
        case .trailer:
            switch framing {
            case .gzip:
                Self.appendLittleEndian(Self.crc32OfZeros(decodedBytes), to: &bits.output)
                Self.appendLittleEndian(UInt32(truncatingIfNeeded: decodedBytes), to: &bits.output)
            case .zlib:
                let adler = Self.adler32OfZeros(decodedBytes)
                bits.output.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: adler >> $0) })
            case .raw:
                break
            }
            phase = .done
        case .done:
            break
        }
    }

    // MARK: Codes

    /// Base lengths of the length symbols 257…285 and their extra-bit counts (RFC 1951 §3.2.5).
    private static let lengthBases: [Int] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    private static let lengthExtraBits: [Int] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]

    /// The symbol, extra-bit count and extra value for a match of `length` (3…258).
    private static func lengthSymbol(_ length: Int) -> (symbol: Int, extraBits: Int, extra: Int) {
        let clamped = min(258, max(3, length))
        let index = lengthBases.lastIndex { $0 <= clamped } ?? 0
        return (257 + index, lengthExtraBits[index], clamped - lengthBases[index])
    }

    /// The fixed Huffman code of a literal/length symbol: code value and bit length.
    private static func fixedCode(_ symbol: Int) -> (code: UInt32, length: Int) {
        switch symbol {
        case 0...143: (UInt32(0x30 + symbol), 8)
        case 144...255: (UInt32(0x190 + symbol - 144), 9)
        case 256...279: (UInt32(symbol - 256), 7)
        default: (UInt32(0xC0 + symbol - 280), 8)
        }
    }

    private static func writeLiteralZero(_ bits: inout BitWriter) {
        let code = fixedCode(0)
        bits.writeHuffman(code.code, length: code.length)
    }

    /// A back-reference of `length` at distance 1 (distance symbol 0, five bits, no extra).
    private static func writeMatch(length: Int, into bits: inout BitWriter) {
        let symbol = lengthSymbol(length)
        let code = fixedCode(symbol.symbol)
        bits.writeHuffman(code.code, length: code.length)
        if symbol.extraBits > 0 { bits.write(UInt64(symbol.extra), count: symbol.extraBits) }
        bits.writeHuffman(0, length: 5)
    }

    /// Bits the tail after the full 258-byte matches takes: one shorter match, or literals.
    private static func remainderBitCount(_ remainder: Int) -> Int {
        guard remainder >= 3 else { return remainder * 8 }
        let symbol = lengthSymbol(remainder)
        return fixedCode(symbol.symbol).length + symbol.extraBits + 5
    }

    private static let groupsPerRun = 5041  // 65,533 bytes

    /// `groupsPerRun` copies of the 13 bytes that eight byte-aligned 258-byte matches make.
    private static let groupRun: [UInt8] = {
        var writer = BitWriter()
        for _ in 0..<8 { writeMatch(length: 258, into: &writer) }
        let group = writer.output
        var run: [UInt8] = []
        run.reserveCapacity(group.count * groupsPerRun)
        for _ in 0..<groupsPerRun { run.append(contentsOf: group) }
        return run
    }()

    private static func appendLittleEndian(_ value: UInt32, to output: inout [UInt8]) {
        output.append(contentsOf: [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) })
    }

    // MARK: Checksums

    /// The CRC-32 (as gzip uses it) of `count` zero bytes, in O(log count).
    ///
    /// Feeding a zero byte to the CRC register is a linear map over GF(2), a 32×32 bit matrix;
    /// `count` zero bytes apply its `count`-th power, found by repeated squaring.
    package static func crc32OfZeros(_ count: Int64) -> UInt32 {
        guard count > 0 else { return 0 }
        // Column i: where one zero bit sends register bit i (reflected polynomial 0xEDB88320).
        var step = [UInt32](repeating: 0, count: 32)
        step[0] = 0xEDB8_8320
        for bit in 1..<32 { step[bit] = 1 << UInt32(bit - 1) }
        for _ in 0..<3 { step = square(step) }  // one zero bit → one zero byte
        var register: UInt32 = 0xFFFF_FFFF
        var remaining = UInt64(count)
        while remaining > 0 {
            if remaining & 1 == 1 { register = apply(step, to: register) }
            remaining >>= 1
            if remaining > 0 { step = square(step) }
        }
        return ~register
    }

    /// The Adler-32 (as zlib uses it) of `count` zero bytes: A stays 1, B grows by 1 a byte.
    package static func adler32OfZeros(_ count: Int64) -> UInt32 {
        let b = UInt32(max(0, count) % 65521)
        return b << 16 | 1
    }

    private static func apply(_ matrix: [UInt32], to vector: UInt32) -> UInt32 {
        var result: UInt32 = 0
        var rest = vector
        var column = 0
        while rest != 0 {
            if rest & 1 == 1 { result ^= matrix[column] }
            rest >>= 1
            column += 1
        }
        return result
    }

    private static func square(_ matrix: [UInt32]) -> [UInt32] {
        matrix.map { apply(matrix, to: $0) }
    }
}

/// Packs bits least-significant first into bytes, as DEFLATE orders them.
private struct BitWriter {
    var output: [UInt8] = []
    private var accumulator: UInt64 = 0
    private(set) var pendingBitCount = 0

    /// Writes the low `count` bits of `value`, least significant first (header fields, extra bits).
    mutating func write(_ value: UInt64, count: Int) {
        accumulator |= (value & ((1 << UInt64(count)) - 1)) << UInt64(pendingBitCount)
        pendingBitCount += count
        while pendingBitCount >= 8 {
            output.append(UInt8(truncatingIfNeeded: accumulator))
            accumulator >>= 8
            pendingBitCount -= 8
        }
    }

    /// Writes a Huffman code of `length` bits, most significant bit first (RFC 1951 §3.1.1).
    mutating func writeHuffman(_ code: UInt32, length: Int) {
        var reversed: UInt64 = 0
        for bit in 0..<length where code & (1 << UInt32(length - 1 - bit)) != 0 {
            reversed |= 1 << UInt64(bit)
        }
        write(reversed, count: length)
    }

    /// Pads with zero bits to the next byte boundary.
    mutating func flushToByte() {
        if pendingBitCount > 0 { write(0, count: 8 - pendingBitCount) }
    }
}
