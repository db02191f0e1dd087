import Foundation
import GentleNetworking

/// One part of a multipart body: a form field or a file.
public enum MultipartElement: Sendable {
    /// A text field; the value's `description` is sent.
    case formField(value: any CustomStringConvertible & Sendable)
    /// A file.
    case file(info: any MultipartFile)

    /// A text field from a value typed as Y-Network's (`any CustomStringConvertible`, which need
    /// not be `Sendable`): its text is taken now, and the part holds it as a `String`. A literal or
    /// a `Sendable` value makes the case itself; both send the same text. Where the part is
    /// assigned to an optional (`parts["note"] = …`), Swift picks the case and refuses such a
    /// value: write `MultipartElement.formField(value:)` there.
    @_disfavoredOverload
    public static func formField(value: any CustomStringConvertible) -> MultipartElement {
        .formField(value: ValueText.of(value))
    }

    /// Appends this part (its headers, a blank line, its bytes and the closing CRLF) to `data`.
    ///
    /// A file given by URL is read into `data`; prefer ``MultipartBuilder/writeBody(to:)`` for
    /// large files. An unreadable file is written as empty here; `writeBody(to:)` throws instead.
    public func encode(data: inout Data, name: String) {
        data.append(Data(head(name: name).utf8))
        data.append((try? content()) ?? Data())
        data.append(Data("\r\n".utf8))
    }

    /// The part's bytes, reading a file part given by URL.
    ///
    /// - Throws: ``MultipartError/unreadableFile(_:)`` when that file cannot be read, is not a
    ///   regular file, or is larger than ``RequestBodyStream/maxBytes``.
    func content() throws -> Data {
        switch self {
        case .formField(let value):
            return Data(ValueText.of(value).utf8)
        case .file(let info):
            guard let url = info.fileURL else { return info.data ?? Data() }
            // Only a local file: `Data(contentsOf:)` would fetch an `http(s)` URL itself, and
            // another URL's path must not be read as a local one.
            // Only a regular file, at most RequestBodyStream.maxBytes: `/dev/zero` was read until
            // memory ran out, a FIFO held the thread in open(2).
            guard let path = url.localFilePath,
                let data = try? RegularFile.contents(path, limit: RequestBodyStream.maxBytes, request: nil)
            else { throw MultipartError.unreadableFile(url) }
            return data
        }
    }

    /// The part's headers and the blank line after them.
    func head(name: String) -> String {
        switch self {
        case .formField:
            "Content-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n\r\n"
        case .file(let info):
            "Content-Disposition: form-data; name=\"\(Self.quoted(name))\"; filename=\"\(Self.quoted(info.fileName))\"\r\n"
                + "Content-Type: \(Self.headerSafe(info.mimeType))\r\n\r\n"
        }
    }

    /// The size of the part's body bytes, without reading a file (from its size on disk).
    ///
    /// - Throws: ``MultipartError/unreadableFile(_:)`` for a file that cannot be opened or is not
    ///   a regular file.
    func contentLength() throws -> Int64 {
        switch self {
        case .formField(let value):
            return Int64(ValueText.of(value).utf8.count)
        case .file(let info):
            if let url = info.fileURL {
                // The size of what a read gets: a symbolic link followed, anything but a regular
                // file refused (a device or FIFO has size 0 and no end).
                guard let path = url.localFilePath, let opened = try? RegularFile.opened(path, request: nil) else {
                    throw MultipartError.unreadableFile(url)
                }
                close(opened.descriptor)
                return opened.size
            }
            return Int64(info.data?.count ?? 0)
        }
    }

    /// A name or file name inside quotes, escaped as HTML forms do: `"` → `%22`, CR → `%0D`,
    /// LF → `%0A` (and NUL → `%00`, which servers' parsers cut at), so no value can end the
    /// header or add one. A backslash is `%5C` too: a parser that reads RFC 9110's quoted pairs
    /// took `name="field\"` as an escaped quote, and what followed (`; filename="; name=admin"`)
    /// as parameters of its own, where one that does not saw a file named `; name=admin`.
    static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "%5C", options: .literal).replacingOccurrences(
            of: "\"", with: "%22", options: .literal
        )
        .replacingOccurrences(of: "\r", with: "%0D", options: .literal).replacingOccurrences(
            of: "\n", with: "%0A", options: .literal
        )
        .replacingOccurrences(of: "\0", with: "%00", options: .literal)
    }

    /// A header value with CR, LF and NUL removed.
    static func headerSafe(_ text: String) -> String {
        text.replacingOccurrences(of: "\r", with: "", options: .literal).replacingOccurrences(
            of: "\n", with: "", options: .literal
        )
        .replacingOccurrences(of: "\0", with: "", options: .literal)
    }
}
