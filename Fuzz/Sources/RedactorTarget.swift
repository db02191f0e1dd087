import Foundation

@testable import GentleNetworking

/// The redactor every log record and error excerpt goes through: JSON and form bodies, header
/// values, URLs.
///
/// Input: `Q` is reserved (the harness maps it to `q`): the secret is `QQQQQQQQQQQQ`. Byte 0 picks
/// the shape: a JSON document built from the rest (objects, arrays, strings, numbers; byte-coded)
/// with the secret in a field named `password`, `token`, `cookie` or an escaped spelling of one;
/// the same document cut short or followed by garbage (the tolerant scanner's path); or the rest
/// as raw text with no secret. Byte 1 sets the excerpt limit. Header values and a URL with the
/// secret in a sensitive query item and in the user info are redacted too.
///
/// Asserts: no trap; no `Q` ever reaches the output of a body, header or URL redaction (not even
/// part of the secret); an excerpt holds no control character unescaped (the escaper's fast
/// byte scan agrees with its own character test). (The length of an excerpt is not asserted:
/// escapes make it up to six times the limit.)
enum RedactorTarget {
    static let secret = "QQQQQQQQQQQQ"
    static let secretKeys = ["password", "token", "cookie", "pass\\u0077ord", "T\\u006fken", "Set-Cookie", "api_key"]

    /// Writes a JSON value from the fuzzer's bytes, with the secret under sensitive keys.
    struct JSONWriter {
        var input: FuzzInput
        var output = ""
        var secrets = 0

        mutating func value(depth: Int) {
            let kind = depth > 6 ? 2 + input.choice(2) : input.choice(5)
            switch kind {
            case 0: object(depth: depth)
            case 1: array(depth: depth)
            case 2: output += quoted(text())
            case 3: output += ["0", "-1.5e3", "true", "false", "null", "12345678901234567890"][input.choice(6)]
            default: object(depth: depth)
            }
        }

        mutating func object(depth: Int) {
            output += "{"
            let count = input.choice(5)
            for index in 0..<count {
                if index > 0 { output += "," }
                if input.choice(3) == 0 {
                    output += "\"" + secretKeys[input.choice(secretKeys.count)] + "\":"
                    secrets += 1
                    // The secret, or a structure holding it.
                    switch input.choice(4) {
                    case 0: output += "[" + quoted(secret) + "," + quoted(secret) + "]"
                    case 1: output += "{\"inner\":" + quoted(secret) + "}"
                    default: output += quoted(secret)
                    }
                } else {
                    output += quoted(text()) + ":"
                    value(depth: depth + 1)
                }
            }
            output += "}"
        }

        mutating func array(depth: Int) {
            output += "["
            let count = input.choice(4)
            for index in 0..<count {
                if index > 0 { output += "," }
                // An array's own strings are not secrets unless a sensitive key holds them.
                object(depth: depth + 1)
            }
            output += "]"
        }

        mutating func text() -> String {
            let length = input.choice(12)
            var text = ""
            for _ in 0..<length {
                let byte = input.byte()
                text.unicodeScalars.append(Unicode.Scalar(byte == UInt8(ascii: "Q") ? UInt8(ascii: "q") : byte))
            }
            return text
        }

        func quoted(_ text: String) -> String {
            var result = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": result += "\\\""
                case "\\": result += "\\\\"
                case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
                default: result.unicodeScalars.append(scalar)
                }
            }
            return result + "\""
        }
    }

    static func run(_ input: FuzzInput) {
        var input = input
        let shape = input.choice(4)
        let limit = Int(input.byte()) * 8
        let body: [UInt8]
        switch shape {
        case 0, 1, 2:
            var writer = JSONWriter(input: input)
            writer.object(depth: 0)
            var bytes = Array(writer.output.utf8)
            if shape == 1 {
                bytes = Array(bytes.prefix(Int(writer.input.byte()) * Int(writer.input.byte()) % (bytes.count + 1)))
            } else if shape == 2 {
                bytes += Array(",}garbage\"".utf8)
            }
            body = bytes
            input = writer.input
        default:
            body = input.rest().map { $0 == UInt8(ascii: "Q") ? UInt8(ascii: "q") : $0 }
        }
        let excerpt = Redactor.bodyExcerpt(Data(body), limit: limit)
        if excerpt.contains("Q") {
            violated(
                "the secret leaked from \(String(decoding: body, as: UTF8.self).debugDescription): \(excerpt.debugDescription)"
            )
        }
        if excerpt.unicodeScalars.contains(where: PrintableText.isControl) {
            violated("a control character is in the excerpt, unescaped: \(excerpt.debugDescription)")
        }
        headersAndURL(String(decoding: body.prefix(24), as: UTF8.self).replacingOccurrences(of: "Q", with: "q"))
    }

    static func headersAndURL(_ text: String) {
        for name in ["Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Session-Id"] {
            let value = Redactor.headerValue(name: name, value: "Bearer " + secret)
            if value.contains("Q") { violated("header \(name) leaked: \(value)") }
            let bare = Redactor.headerValue(name: name, value: text + secret)
            if bare.contains("Q") { violated("header \(name) leaked: \(bare)") }
        }
        let query = PercentEncoding.queryComponent(text)
        for template in [
            "https://user:\(secret)@api.example.com/p?\(query)=1&password=\(secret)#\(secret)",
            "https://api.example.com/p?access_token=\(secret)&\(query)",
            "https://api.example.com/p?pass%77ord=\(secret)&x=\(query)",
        ] {
            guard let url = URL(string: template) else { continue }
            let redacted = Redactor.url(url)
            if redacted.contains("Q") { violated("the URL \(template) leaked: \(redacted)") }
        }
    }
}
