import Foundation

/// The loopback and hostile test servers' request parser (``HTTPRequestParser``), driven as
/// their connection loops drive it: bytes arrive in pieces, a head is parsed, then a chunked
/// or `Content-Length` body, then the next request on the connection.
///
/// Input: the first byte sets the size of the pieces (1–64 bytes, or everything at once); the
/// rest is what a client sends.
///
/// Asserts: no trap and no hang; a head has a method, a target and an `HTTP/` version without
/// spaces, and header names without a colon; buffered bytes never exceed what was sent; a body
/// is never longer than the bytes sent.
enum RequestParserTarget {
    static func run(_ input: FuzzInput) {
        var input = input
        let pieceByte = Int(input.byte())
        let bytes = input.rest()
        let piece = pieceByte >= 64 ? max(1, bytes.count) : pieceByte + 1
        var parser = HTTPRequestParser()
        var sent = 0
        func feed() -> Bool {
            guard sent < bytes.count else { return false }
            let end = min(bytes.count, sent + piece)
            parser.append(bytes[sent..<end])
            sent = end
            if parser.buffer.count > sent { violated("\(parser.buffer.count) bytes buffered of \(sent) sent") }
            return true
        }
        var requests = 0
        do {
            while true {
                var head = try parser.nextHead()
                while head == nil {
                    guard feed() else { return }
                    head = try parser.nextHead()
                }
                guard let head else { return }
                check(head)
                requests += 1
                if requests > bytes.count { violated("more requests than bytes") }
                let isChunked = head.header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
                if isChunked {
                    while true {
                        if let body = try parser.nextChunkedBody() {
                            if body.count > bytes.count { violated("a body longer than the input") }
                            break
                        }
                        guard feed() else { return }
                    }
                } else if let lengthText = head.header("Content-Length") {
                    guard let length = Int(lengthText), length >= 0 else { return }
                    while true {
                        if let body = parser.nextBytes(length) {
                            if body.count != length { violated("asked for \(length) bytes, got \(body.count)") }
                            break
                        }
                        guard feed() else { return }
                    }
                }
            }
        } catch {
            // A malformed or oversized request: the servers answer 400 and close.
        }
    }

    static func check(_ head: HTTPRequestParser.Head) {
        for part in [head.method, head.target, head.version] where part.isEmpty || part.contains(" ") {
            violated("request line part \(part.debugDescription)")
        }
        if !head.version.hasPrefix("HTTP/") { violated("version \(head.version.debugDescription)") }
        for (name, _) in head.headers where name.contains(":") { violated("header name \(name.debugDescription)") }
    }
}
