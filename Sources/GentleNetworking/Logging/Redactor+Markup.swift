import Foundation

extension Redactor {
    /// `text` with the secrets of markup replaced, for bodies that look like markup
    /// (``looksLikeMarkup(_:)``):
    /// - in a multipart body (its first line a `--boundary`), a part named like a secret
    ///   (`Content-Disposition: form-data; name="password"`): its content, up to the next
    ///   boundary line;
    /// - an XML element named like one (`<password>…</password>`, `<ns:Token>`): its content, up
    ///   to its closing tag;
    /// - an attribute named like one (`<user password="…">`, in any tag): its quoted value.
    ///
    /// `key` alone is not taken as a secret's name here (S3 names every object `<Key>`). Where
    /// the end is missing (a body cut short), everything after the start is replaced. One pass,
    /// linear in the length of `text`.
    static func redactMarkup(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes -> String? in
            var scanner = MarkupScanner(bytes: bytes)
            return scanner.run() ? String(decoding: scanner.output, as: UTF8.self) : nil
        } ?? text
    }
}

/// The one pass of ``Redactor/redactMarkup(_:)``.
struct MarkupScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var output: [UInt8] = []
    private var index = 0
    private var changed = false
    private let placeholder = Array(Redactor.placeholder.utf8)
    /// A multipart body's boundary line (`--…`, without its line end), or `nil`.
    private let boundary: [UInt8]?
    /// A sensitive element whose opening tag is being scanned (its attributes too): at its `>`,
    /// the content up to the closing tag is replaced.
    private var openElement: [UInt8]?
    /// The position of the first `>` at or after a position asked before (positions only grow),
    /// so many `<name`s before one far `>` do not each scan to it.
    private var greaterThan: Int?? = .none

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        output.reserveCapacity(bytes.count)
        var start = 0
        while start < bytes.count,
            bytes[start] == 0x20 || bytes[start] == 0x0D || bytes[start] == 0x0A
                || bytes[start] == 0x09
        {
            start += 1
        }
        // The boundary line: the first line, or in a body with a preamble (RFC 2046 §5.1.1), the
        // first line starting with `--` that a part's header line follows. Markup (`<…`) has
        // none: its `-->` lines are no boundary.
        if start < bytes.count, bytes[start] == UInt8(ascii: "<") {
            boundary = nil
        } else if let line = Self.boundaryLine(in: bytes, from: start) {
            boundary = Array(bytes[line])
            if line.lowerBound > start {
                // A preamble: not a part, but text before the first; redacted as a form, as it
                // was when the body was taken for one (`token=…` there stays hidden).
                // Its line end stays: the boundary must still start a line.
                var textEnd = line.lowerBound
                while textEnd > 0, bytes[textEnd - 1] == 0x0A || bytes[textEnd - 1] == 0x0D { textEnd -= 1 }
                let preamble = String(decoding: bytes[0..<textEnd], as: UTF8.self)
                let redacted =
                    Redactor.looksLikeForm(preamble, bytes: preamble.utf8)
                    ? Redactor.redactForm(preamble) : preamble
                output.append(contentsOf: redacted.utf8)
                output.append(contentsOf: bytes[textEnd..<line.lowerBound])
                changed = redacted != preamble
                index = line.lowerBound
            }
        } else {
            boundary = nil
        }
    }

    /// The first boundary line at or after `start` (without its line end): the line at `start`
    /// when it starts with `--`, otherwise the first later line starting with `--` whose next
    /// line is a part's header (`Content-Disposition:` or `Content-Type:`, any case).
    static func boundaryLine(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        func lineEnd(_ from: Int) -> Int {
            var end = from
            while end < bytes.count, bytes[end] != 0x0D, bytes[end] != 0x0A { end += 1 }
            return end
        }
        func startsWithDashes(_ position: Int) -> Bool {
            bytes.count - position > 2 && bytes[position] == UInt8(ascii: "-")
                && bytes[position + 1] == UInt8(ascii: "-")
        }
        if startsWithDashes(start) { return start..<lineEnd(start) }
        var position = start
        while position < bytes.count {
            guard bytes[position] == 0x0A else {
                position += 1
                continue
            }
            let line = position + 1
            position = line
            guard startsWithDashes(line) else { continue }
            let end = lineEnd(line)
            var next = end
            if next < bytes.count, bytes[next] == 0x0D { next += 1 }
            if next < bytes.count, bytes[next] == 0x0A { next += 1 }
            if startsWithPartHeader(bytes, at: next) { return line..<end }
        }
        return nil
    }

    /// Whether a part's header line (`Content-Disposition:`, `Content-Type:`, any case) starts
    /// at `position`.
    private static func startsWithPartHeader(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        ["content-disposition:", "content-type:"].contains { header in
            let needle = Array(header.utf8)
            guard bytes.count - position >= needle.count else { return false }
            for offset in 0..<needle.count {
                let byte = bytes[position + offset]
                let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                if folded != needle[offset] { return false }
            }
            return true
        }
    }

    /// Scans the whole text; `true` when anything was replaced.
    mutating func run() -> Bool {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ">"), let name = openElement {
                openElement = nil
                output.append(byte)
                output.append(contentsOf: placeholder)
                changed = true
                index = find([UInt8(ascii: "<"), UInt8(ascii: "/")] + name, from: index + 1) ?? bytes.count
                continue
            }
            if byte == UInt8(ascii: "<"), openElement == nil, element() { continue }
            if byte == UInt8(ascii: "="), let quote = quote(after: index), attribute(quotedAt: quote) {
                continue
            }
            if byte == UInt8(ascii: "="), boundary != nil, unquotedPartName() { continue }
            output.append(byte)
            index += 1
        }
        if openElement != nil {
            // A tag that never closes: what would be its content is all there is.
            output.append(contentsOf: placeholder)
            changed = true
        }
        return changed
    }

    /// Whether `name` (bytes of a tag or attribute name) is a secret's, `key` alone excepted.
    /// `formField`: a multipart part's name, read as a form field's (`otp`, `pin` included).
    private static func isSensitive(_ name: Slice<UnsafeBufferPointer<UInt8>>, formField: Bool = false) -> Bool {
        let local = name.lastIndex(of: UInt8(ascii: ":")).map { name[name.index(after: $0)...] } ?? name
        guard !local.isEmpty else { return false }
        let text = String(decoding: local, as: UTF8.self)
        if formField { return Redactor.isSensitiveFormName(text) }
        return text.lowercased() != "key" && Redactor.isSensitiveName(text)
    }

    /// At `<`: the opening tag of an element named like a secret; its attributes are scanned on
    /// (``run()``), and at its `>` its content is replaced. A self-closing tag has none.
    private mutating func element() -> Bool {
        var nameEnd = index + 1
        while nameEnd < bytes.count, Self.isNameByte(bytes[nameEnd]) { nameEnd += 1 }
        guard nameEnd > index + 1, Self.isSensitive(bytes[(index + 1)..<nameEnd]) else { return false }
        if let close = nextGreaterThan(from: nameEnd), close > 0, bytes[close - 1] == UInt8(ascii: "/") {
            return false
        }
        openElement = Array(bytes[(index + 1)..<nameEnd])
        output.append(contentsOf: bytes[index..<nameEnd])
        index = nameEnd
        return true
    }

    /// The position of the quote (`"` or `'`) that opens an attribute's value after the `=` at
    /// `equals`, blanks allowed between them (XML allows `name = 'v'`); `nil` when none does.
    private func quote(after equals: Int) -> Int? {
        var position = equals + 1
        while position < bytes.count, Self.isBlank(bytes[position]) { position += 1 }
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
        else { return nil }
        return position
    }

    /// Whether `byte` is a space, a tab, a CR or a LF.
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    /// At an `=` whose value opens with the quote at `quote`: the value of an attribute named
    /// like a secret is replaced (`token="…"`, `token = '…'`); in a multipart body, the value of
    /// a `name="…"` naming one replaces the part's content.
    private mutating func attribute(quotedAt quote: Int) -> Bool {
        var nameEnd = index
        while nameEnd > 0, Self.isBlank(bytes[nameEnd - 1]) { nameEnd -= 1 }
        var nameStart = nameEnd
        while nameStart > 0, Self.isNameByte(bytes[nameStart - 1]) { nameStart -= 1 }
        guard nameStart < nameEnd else { return false }
        let valueStart = quote + 1
        let valueEnd = find([bytes[quote]], from: valueStart) ?? bytes.count
        if Self.isSensitive(bytes[nameStart..<nameEnd]) {
            output.append(contentsOf: bytes[index..<valueStart])
            output.append(contentsOf: placeholder)
            changed = true
            index = valueEnd
            return true
        }
        guard boundary != nil, isPartNameParameter(bytes[nameStart..<nameEnd]), valueEnd < bytes.count,
            Self.isSensitive(bytes[valueStart..<valueEnd], formField: true)
        else { return false }
        replacePartContent(after: valueEnd)
        return true
    }

    /// At `=` in a multipart body: a part named like a secret by an unquoted token
    /// (`name=password`, which RFC 7578 allows and servers accept) has its content replaced.
    private mutating func unquotedPartName() -> Bool {
        var nameStart = index
        while nameStart > 0, Self.isNameByte(bytes[nameStart - 1]) { nameStart -= 1 }
        guard isPartNameParameter(bytes[nameStart..<index]), isInContentDisposition(nameStart) else { return false }
        let valueStart = index + 1
        var valueEnd = valueStart
        while valueEnd < bytes.count, RequestValidator.isTokenByte(bytes[valueEnd]) { valueEnd += 1 }
        guard valueEnd > valueStart, Self.isSensitive(bytes[valueStart..<valueEnd], formField: true) else {
            return false
        }
        replacePartContent(after: valueEnd)
        return true
    }

    /// Whether `position` is on a `Content-Disposition:` line (any case), looking back at most
    /// 512 bytes for the line's start: an unquoted `name=` anywhere else is a part's content
    /// (an `.ini` file, a SQL comment), not its name.
    private func isInContentDisposition(_ position: Int) -> Bool {
        var lineStart = position
        while lineStart > 0, bytes[lineStart - 1] != 0x0A {
            guard position - lineStart < 512 else { return false }
            lineStart -= 1
        }
        let header = Array("content-disposition:".utf8)
        guard position - lineStart >= header.count else { return false }
        for offset in 0..<header.count {
            let byte = bytes[lineStart + offset]
            if (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) != header[offset] { return false }
        }
        return true
    }

    /// Whether the parameter `name` (before an `=`) is `name` (any case): a part's field name
    /// (`filename` is not).
    private func isPartNameParameter(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        name.count == 4 && String(decoding: name, as: UTF8.self).lowercased() == "name"
    }

    /// Copies the part's headers up to their end (the first blank line after `headerPosition`),
    /// then the placeholder for its content, up to the next boundary line.
    private mutating func replacePartContent(after headerPosition: Int) {
        guard let boundary else { return }
        let contentStart = blankLineEnd(from: headerPosition) ?? bytes.count
        output.append(contentsOf: bytes[index..<contentStart])
        output.append(contentsOf: placeholder)
        changed = true
        let next = find([0x0A] + boundary, from: contentStart)
        index = next.map { $0 > contentStart && bytes[$0 - 1] == 0x0D ? $0 - 1 : $0 } ?? bytes.count
    }

    /// Where the first blank line (`\n\n` or `\n\r\n`) at or after `start` ends, in one pass.
    private func blankLineEnd(from start: Int) -> Int? {
        var position = start
        while position < bytes.count {
            if bytes[position] == 0x0A {
                if position + 1 < bytes.count, bytes[position + 1] == 0x0A { return position + 2 }
                if position + 2 < bytes.count, bytes[position + 1] == 0x0D, bytes[position + 2] == 0x0A {
                    return position + 3
                }
            }
            position += 1
        }
        return nil
    }

    private mutating func nextGreaterThan(from start: Int) -> Int? {
        if case .some(let known) = greaterThan, known.map({ $0 >= start }) ?? true { return known }
        let found = find([UInt8(ascii: ">")], from: start)
        greaterThan = .some(found)
        return found
    }

    /// The index where `needle` starts at or after `start`, or `nil`.
    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, needle.count <= bytes.count else { return nil }
        var position = start
        while position + needle.count <= bytes.count {
            if bytes[position] == first, needle.indices.allSatisfy({ bytes[position + $0] == needle[$0] }) {
                return position
            }
            position += 1
        }
        return nil
    }

    /// Letters, digits, `-`, `_`, `.` and `:` (a namespace prefix).
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: ":"):
            true
        default:
            false
        }
    }
}
