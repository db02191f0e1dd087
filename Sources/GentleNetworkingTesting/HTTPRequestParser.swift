import Foundation

/// Incremental HTTP/1.1 request parsing over a byte buffer, with no I/O of its own: the
/// connection feeds it bytes and asks for the next complete piece.
struct HTTPRequestParser {
    struct Head {
        var method: String
        var target: String
        var version: String
        var headers: [(name: String, value: String)]

        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    enum ParseError: Error {
        case malformed(String)
        case tooLarge
    }

    private(set) var buffer: [UInt8] = []
    private var consumed = 0
    private var scanFrom = 0
    static let maxHeaderBytes = 64 * 1024

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        if consumed > 0 && consumed >= buffer.count / 2 {
            buffer.removeFirst(consumed)
            scanFrom = max(0, scanFrom - consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
    }

    var hasUnconsumedBytes: Bool { consumed < buffer.count }

    /// The request head, when a complete one is buffered.
    mutating func nextHead() throws -> Head? {
        guard let end = find(Array("\r\n\r\n".utf8), from: max(consumed, scanFrom)) else {
            scanFrom = max(consumed, buffer.count - 3)
            if buffer.count - consumed > Self.maxHeaderBytes { throw ParseError.tooLarge }
            return nil
        }
        let text = String(decoding: buffer[consumed..<end], as: UTF8.self)
        consumed = end + 4
        scanFrom = consumed
        // Lines end at LF, a CR before it dropped: a bare LF ends a line, as nginx (and most
        // servers) read it, so a value with an LF in it is recorded as the two lines a lenient
        // server would see (an injected field shows as a field of its own).
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        // Tolerate stray empty lines before a request line (RFC 9112 §2.2).
        while lines.first == "" { lines.removeFirst() }
        guard let requestLine = lines.first else { throw ParseError.malformed("empty request") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/") else {
            throw ParseError.malformed("bad request line: \(requestLine)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw ParseError.malformed("bad header: \(line)") }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
        }
        return Head(method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
    }

    /// Exactly `count` body bytes, when buffered.
    mutating func nextBytes(_ count: Int) -> Data? {
        guard buffer.count - consumed >= count else { return nil }
        let data = Data(buffer[consumed..<consumed + count])
        consumed += count
        scanFrom = consumed
        return data
    }

    /// A whole chunked body (with its trailers), when buffered; `nil` when more bytes are needed.
    mutating func nextChunkedBody() throws -> Data? {
        var cursor = consumed
        var body = Data()
        while true {
            guard let lineEnd = find(Array("\r\n".utf8), from: cursor) else { return nil }
            let sizeLine = String(decoding: buffer[cursor..<lineEnd], as: UTF8.self)
            let sizeText = sizeLine.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw ParseError.malformed("bad chunk size: \(sizeLine)")
            }
            // A size near Int.max would overflow the bounds arithmetic below: no body is that large.
            let (sizeWithCRLF, overflow) = size.addingReportingOverflow(2)
            if overflow { throw ParseError.malformed("chunk size too large: \(sizeLine)") }
            cursor = lineEnd + 2
            if size == 0 {
                // Trailers end with an empty line.
                while true {
                    guard let trailerEnd = find(Array("\r\n".utf8), from: cursor) else { return nil }
                    let isEmpty = trailerEnd == cursor
                    cursor = trailerEnd + 2
                    if isEmpty { break }
                }
                consumed = cursor
                scanFrom = consumed
                return body
            }
            guard buffer.count - cursor >= sizeWithCRLF else { return nil }
            body.append(contentsOf: buffer[cursor..<cursor + size])
            cursor += sizeWithCRLF
        }
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= needle.count, start <= buffer.count - needle.count else { return nil }
        var index = start
        let last = buffer.count - needle.count
        while index <= last {
            if buffer[index] == needle[0] {
                var matched = true
                for offset in 1..<needle.count where buffer[index + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}
