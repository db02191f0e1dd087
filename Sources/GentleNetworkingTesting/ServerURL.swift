import Foundation

/// URLs on a test server, formed from a path so that no argument can point them anywhere else.
package enum ServerURL {
    /// The URL for `path` (with an optional `?query`) on the server at `baseURL`, which is
    /// `scheme://host:port` with no path. The result always has `baseURL`'s scheme, host and port.
    ///
    /// The argument is taken as path text, whatever it looks like (see ``target(_:)``), so
    /// `"//evil.example/x"` and `"http://evil.example/"` stay on this server. Should the result
    /// not parse (it always does for a `scheme://host:port` base), `baseURL` is returned.
    package static func url(_ path: String, on baseURL: URL) -> URL {
        URL(string: baseURL.absoluteString + target(path)) ?? baseURL
    }

    /// `text` as an origin-form request target: `/path` and, when `text` has a `?`, `?query`.
    ///
    /// - Everything before the first `?` is the path; leading slashes are collapsed to one (or
    ///   one is added), so it can never name a host. Everything after it is the query.
    /// - Bytes a path (or query) may not hold are percent-encoded as UTF-8, including `#` (so
    ///   a fragment is sent as part of the path or query), `\`, spaces and control characters.
    ///   A valid escape such as `%20` is kept as written; a `%` not followed by two hex digits
    ///   becomes `%25`.
    /// - Dot segments (`/a/../b`) are kept as written; the empty string is `/`.
    package static func target(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?"))
        let path = bytes[..<(queryStart ?? bytes.endIndex)].drop { $0 == UInt8(ascii: "/") }
        var target = "/" + encode(path, keeping: pathBytes)
        if let queryStart {
            target += "?" + encode(bytes[(queryStart + 1)...], keeping: queryBytes)
        }
        return target
    }

    /// RFC 3986 `pchar` and `/`: unreserved, sub-delims, `:` and `@`.
    private static let pathBytes: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/".utf8))

    /// RFC 3986 `query`: `pchar`, `/` and `?`.
    private static let queryBytes: Set<UInt8> = pathBytes.union([UInt8(ascii: "?")])

    private static func encode(_ bytes: ArraySlice<UInt8>, keeping allowed: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output = [UInt8]()
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), bytes.endIndex - index > 2, isHexDigit(bytes[index + 1]),
                isHexDigit(bytes[index + 2])
            {
                output += bytes[index...(index + 2)]
                index += 3
                continue
            }
            if allowed.contains(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: "a")...UInt8(ascii: "f"):
            true
        default:
            false
        }
    }
}
