import Foundation

@testable import YNetwork

/// Y-Network's multipart bodies: field names, file names, MIME types and contents a caller
/// gives (often from user input), framed by a boundary.
///
/// Input: the first line is the boundary (`-` alone: the default random one); then parts
/// separated by a `\u{0}` byte: `field:NAME\nVALUE` or `file:NAME\nFILENAME\nMIME\nCONTENT`.
///
/// Asserts: no trap; a boundary RFC 2046 does not allow makes `body(encoder:)` and `contentLength()`
/// throw `invalidBoundary` naming it; a part whose content holds `--` and the boundary makes `body(encoder:)` throw
/// `boundaryInContent` naming it; otherwise `contentLength()` equals the size of `body(encoder:)`; a form whose
/// boundary is valid (RFC 2046: 1–70 characters) and occurs in no part parses back into exactly
/// its parts, in name order, each with one `Content-Disposition` line (plus `Content-Type` for a
/// file) naming it, and its content byte for byte: no name or type can add a header or a part.
enum MultipartTarget {
    struct Part {
        var name: String
        var isFile: Bool
        var fileName = ""
        var mimeType = ""
        var content: [UInt8]
    }

    static func run(_ input: FuzzInput) {
        var input = input
        let boundaryLine = input.string(upTo: UInt8(ascii: "\n"))
        let rest = input.rest()
        var parts: [String: Part] = [:]
        for chunk in rest.split(separator: 0, omittingEmptySubsequences: false) {
            var reader = FuzzInput(Array(chunk))
            let kind = reader.string(upTo: UInt8(ascii: ":"))
            let name = reader.string(upTo: UInt8(ascii: "\n"))
            if kind == "file" {
                let fileName = reader.string(upTo: UInt8(ascii: "\n"))
                let mimeType = reader.string(upTo: UInt8(ascii: "\n"))
                parts[name] = Part(
                    name: name, isFile: true, fileName: fileName, mimeType: mimeType, content: reader.rest())
            } else {
                // A field's value is text: its description is sent.
                let value = String(decoding: reader.rest(), as: UTF8.self)
                parts[name] = Part(name: name, isFile: false, content: Array(value.utf8))
            }
        }
        var elements: [String: MultipartElement] = [:]
        for (name, part) in parts {
            elements[name] =
                part.isFile
                ? .file(
                    info: MultipartFileInfo(fileName: part.fileName, data: Data(part.content), mimeType: part.mimeType))
                : .formField(value: String(decoding: part.content, as: UTF8.self))
        }
        let form =
            boundaryLine == "-"
            ? MultipartForm(parts: elements) : MultipartForm(parts: elements, boundary: boundaryLine)
        // A part whose content holds `--` and the boundary is refused, naming the first such part
        // in name order (the order parts are written in).
        let holding = parts.keys.sorted().first { name in
            parts[name].map { contains($0.content, Array("--\(form.boundary)".utf8)) } ?? false
        }
        // A boundary outside RFC 2046 (1–70 of `A-Z a-z 0-9 '()+_,-./:=?` and space, not ending
        // in a space) is refused before anything else, by both calls.
        let bchars = Set("'()+_,-./:=? ".utf8)
        let boundaryBytes = Array(form.boundary.utf8)
        let validBoundary =
            (1...70).contains(boundaryBytes.count) && boundaryBytes.last != UInt8(ascii: " ")
            && boundaryBytes.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || bchars.contains(byte)
            }
        if !validBoundary {
            for call in [{ _ = try form.body(encoder: nil) }, { _ = try form.contentLength() }] as [() throws -> Void] {
                do {
                    try call()
                    violated("the invalid boundary \(form.boundary.debugDescription) was accepted")
                } catch MultipartError.invalidBoundary(let refused) {
                    if refused != form.boundary { violated("invalidBoundary named \(refused.debugDescription)") }
                } catch {
                    violated("an invalid boundary threw \(error)")
                }
            }
            return
        }
        let body: Data
        let length: Int64
        do {
            body = try form.body(encoder: nil)
            length = try form.contentLength()
        } catch MultipartError.boundaryInContent(let part) {
            if part != holding {
                violated("boundaryInContent(\(part.debugDescription)), expected \(String(describing: holding))")
            }
            return
        } catch {
            violated("an in-memory form threw \(error)")
        }
        if let holding { violated("part \(holding.debugDescription) holds the boundary, yet the body was built") }
        if Int64(body.count) != length { violated("contentLength \(length) for a body of \(body.count) bytes") }
        let boundary = form.boundary
        guard (1...70).contains(boundary.utf8.count), !boundary.hasSuffix(" "),
            !boundary.contains("\r"), !boundary.contains("\n")
        else { return }
        let delimiter = Array("--\(boundary)".utf8)
        for part in parts.values
        where contains(Array(part.name.utf8) + part.content + Array((part.fileName + part.mimeType).utf8), delimiter) {
            return  // The caller's boundary occurs in a part: documented as the caller's to avoid.
        }
        parse(Array(body), delimiter: delimiter, expected: parts.keys.sorted().compactMap { parts[$0] })
    }

    /// Splits the body as a server does and compares every part with what was given.
    static func parse(_ body: [UInt8], delimiter: [UInt8], expected: [Part]) {
        let opening = delimiter + Array("\r\n".utf8)
        let separator = Array("\r\n".utf8) + opening
        let closing = Array("\r\n".utf8) + delimiter + Array("--\r\n".utf8)
        guard expected.isEmpty || body.starts(with: opening) else { violated("the body does not open with a boundary") }
        guard body.count >= delimiter.count + 4,
            Array(body.suffix(delimiter.count + 4)) == delimiter + Array("--\r\n".utf8)
        else { violated("the body does not end with the closing boundary") }
        if expected.isEmpty {
            if body != delimiter + Array("--\r\n".utf8) { violated("an empty form has content") }
            return
        }
        // Between the opening and the closing delimiter, parts are joined by CRLF + delimiter + CRLF.
        let inner = Array(body[opening.count..<(body.count - closing.count)])
        let pieces = split(inner, by: separator)
        if pieces.count != expected.count { violated("\(pieces.count) parts parsed, \(expected.count) given") }
        for (piece, part) in zip(pieces, expected) {
            guard let headEnd = find(Array("\r\n\r\n".utf8), in: piece) else { violated("a part without a head") }
            // Compared as bytes: a name starting with a combining mark joins the quote before it
            // into one Character, and String comparisons would see a different prefix.
            let head = Array(piece[..<headEnd])
            let content = Array(piece[(headEnd + 4)...])
            let lines = split(head, by: Array("\r\n".utf8))
            if lines.count != (part.isFile ? 2 : 1) {
                violated("part \(part.name.debugDescription) has head \(String(decoding: head, as: UTF8.self))")
            }
            if !lines[0].starts(with: Array("Content-Disposition: form-data; name=\"".utf8)) {
                violated("part \(part.name.debugDescription): \(String(decoding: lines[0], as: UTF8.self))")
            }
            if part.isFile, !lines[1].starts(with: Array("Content-Type: ".utf8)) {
                violated("file part head \(String(decoding: head, as: UTF8.self))")
            }
            if content != part.content { violated("part \(part.name.debugDescription) content changed") }
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        find(needle, in: haystack[...]) != nil
    }

    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        while index <= haystack.endIndex - needle.count {
            if haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    static func split(_ bytes: [UInt8], by separator: [UInt8]) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        while let found = find(separator, in: bytes[start...]) {
            pieces.append(bytes[start..<found])
            start = found + separator.count
        }
        pieces.append(bytes[start...])
        return pieces
    }
}
