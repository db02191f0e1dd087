import Foundation

extension Redactor {
    /// `text` with the secrets of markup replaced, for bodies that are neither JSON nor a form:
    /// - a multipart part named like a secret (`Content-Disposition: form-data; name="password"`):
    ///   its content, up to the next boundary line;
    /// - an XML element named like one (`<password>…</password>`, `<ns:Token>`): its content,
    ///   up to its closing tag;
    /// - an attribute named like one (`<user password="…">`): its quoted value.
    ///
    /// Where the end is missing (a body cut short), everything after the start is replaced. One
    /// pass, linear in the length of `text`; text with no `<` and no `="` comes back as it is.
    static func redactMarkup(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes -> String? in
            guard bytes.contains(UInt8(ascii: "<")) || bytes.contains(UInt8(ascii: "=")) else { return nil }
            var scanner = MarkupScanner(bytes: bytes)
            return scanner.run() ? String(decoding: scanner.output, as: UTF8.self) : nil
        } ?? text
    }
}

/// The one pass of ``Redactor/redactMarkup(_:)``.
private struct MarkupScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var output: [UInt8] = []
    private var index = 0
    private var changed = false
    private let placeholder = Array(Redactor.placeholder.utf8)

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        output.reserveCapacity(bytes.count)
    }

    /// Scans the whole text; `true` when anything was replaced.
    mutating func run() -> Bool {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<"), element() { continue }
            if byte == UInt8(ascii: "="), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\""),
                attribute()
            {
                continue
            }
            output.append(byte)
            index += 1
        }
        return changed
    }

    /// At `<`: an opening tag whose local name is a secret's has its content replaced.
    private mutating func element() -> Bool {
        var nameEnd = index + 1
        while nameEnd < bytes.count, Self.isNameByte(bytes[nameEnd]) { nameEnd += 1 }
        guard nameEnd > index + 1, nameEnd < bytes.count else { return false }
        let name = bytes[(index + 1)..<nameEnd]
        let local = name.lastIndex(of: UInt8(ascii: ":")).map { name[($0 + 1)...] } ?? name
        guard !local.isEmpty, Redactor.isSensitiveName(String(decoding: local, as: UTF8.self)) else { return false }
        guard let close = nextGreaterThan(from: nameEnd) else {
            // No `>` anywhere after: the rest is the tag and what it would hold.
            output.append(contentsOf: bytes[index..<nameEnd])
            output.append(contentsOf: placeholder)
            changed = true
            index = bytes.count
            return true
        }
        guard bytes[close - 1] != UInt8(ascii: "/") else { return false }
        let contentStart = close + 1
        output.append(contentsOf: bytes[index..<contentStart])
        output.append(contentsOf: placeholder)
        changed = true
        let closing = [UInt8(ascii: "<"), UInt8(ascii: "/")] + Array(name)
        index = find(closing, from: contentStart) ?? bytes.count
        return true
    }

    /// At `="`: the value of an attribute named like a secret is replaced; the value of a
    /// multipart `name="…"` naming one replaces the part's content.
    private mutating func attribute() -> Bool {
        var nameStart = index
        while nameStart > 0, Self.isNameByte(bytes[nameStart - 1]) { nameStart -= 1 }
        guard nameStart < index else { return false }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        let valueStart = index + 2
        let valueEnd = find([UInt8(ascii: "\"")], from: valueStart) ?? bytes.count
        if Redactor.isSensitiveName(name) {
            output.append(contentsOf: bytes[index..<valueStart])
            output.append(contentsOf: placeholder)
            changed = true
            index = valueEnd
            return true
        }
        guard name.lowercased() == "name", valueEnd < bytes.count,
            Redactor.isSensitiveName(String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self))
        else { return false }
        // A multipart part's headers end at the first blank line; its content at the next
        // boundary line (`--` at the start of a line).
        let blank = find([0x0D, 0x0A, 0x0D, 0x0A], from: valueEnd).map { $0 + 4 }
        let bareBlank = find([0x0A, 0x0A], from: valueEnd).map { $0 + 2 }
        // No blank line after it: what follows is all headers or content; replaced whole.
        let contentStart = [blank, bareBlank].compactMap({ $0 }).min() ?? valueEnd
        output.append(contentsOf: bytes[index..<contentStart])
        output.append(contentsOf: placeholder)
        changed = true
        let boundary = find([0x0A, UInt8(ascii: "-"), UInt8(ascii: "-")], from: contentStart)
        index = boundary.map { $0 > contentStart && bytes[$0 - 1] == 0x0D ? $0 - 1 : $0 } ?? bytes.count
        return true
    }

    /// The position of the first `>` at or after `start`, remembered, so that many `<name`s
    /// before one far `>` do not each scan to it (positions only grow).
    private var greaterThan: Int?? = .none

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
