import Foundation

/// Removes credentials from what is logged or quoted in errors: header values, query values
/// and JSON or form fields whose names say they hold a secret (tokens, passwords, API keys,
/// sessions, cookies).
package enum Redactor {
    static let placeholder = "<redacted>"

    package static let sensitiveHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key",
        "x-auth-token", "x-access-token", "x-csrf-token", "x-amz-security-token", "x-auth-key",
        "ocp-apim-subscription-key", "x-functions-key",
    ]
    /// Parts of names that hold a secret wherever they appear in a name. Keys are named
    /// by what they open (`access_key`, `private_key`, `auth-key`, a subscription's or a
    /// function's key), not by `key` alone, which would blank `primary_key` or `Idempotency-Key`.
    private static let sensitiveNameFragments = [
        "token", "password", "passwd", "passphrase", "secret", "apikey", "api_key", "api-key", "authorization",
        "credential", "session", "sessid", "signature", "cookie", "code_verifier", "assertion", "jwt",
        "accesskey", "access_key", "access-key", "privatekey", "private_key", "private-key", "authkey", "auth_key",
        "auth-key", "subscription-key", "subscription_key", "functions-key", "passcode", "mfa_code", "mfa-code",
        "otp_code", "otp-code", "device_code", "device-code", "auth_code", "auth-code", "sms_code", "sms-code",
        "hmac",
    ]
    /// Names that are secrets only as a whole word (`sid` is in `inside`, `sig` in `signal`,
    /// `pass` in `passenger`): `sig` is an Azure shared-access signature, a bearer credential in
    /// a URL; `key` a Google API key (`?key=AIza…`).
    private static let sensitiveExactNames: Set<String> = ["sid", "auth", "sig", "key", "pwd", "pass"]

    /// The most bytes of a body that are parsed or scanned to make an excerpt: 64 KiB. A larger
    /// body is never parsed whole; its prefix is redacted by ``redactJSONPrefix(_:outputLimit:)``.
    static let maxScannedBodyBytes = 64 * 1024

    /// ``sensitiveNameFragments`` and ``sensitiveExactNames`` as bytes, for the ASCII scan.
    private static let fragmentBytes = sensitiveNameFragments.map { Array($0.utf8) }
    private static let exactNameBytes = sensitiveExactNames.map { Array($0.utf8) }
    /// The fragments, lowercased, back to back, ordered by first byte, for the ASCII scan; with
    /// ``fragmentSpans`` and ``fragmentSpanStarts``.
    private static let packedFragments: [UInt8] = fragmentBytes.sorted { $0[0] < $1[0] }.flatMap { $0 }
    /// Each fragment's offset and length in ``packedFragments``, in the same order (by first byte).
    private static let fragmentSpans: [(offset: Int, count: Int)] = {
        var spans: [(offset: Int, count: Int)] = []
        var offset = 0
        for fragment in fragmentBytes.sorted(by: { $0[0] < $1[0] }) {
            spans.append((offset, fragment.count))
            offset += fragment.count
        }
        return spans
    }()
    /// For each ASCII byte `b`, the fragments that start with it are
    /// `fragmentSpans[fragmentSpanStarts[b]..<fragmentSpanStarts[b + 1]]` (129 entries): one flat
    /// table, so a position in a name is tried against those fragments only, with no array per
    /// byte to retain and release (callgrind: ~550 instructions per 13-byte name with nested
    /// arrays).
    private static let fragmentSpanStarts: [Int] = {
        var starts = [Int](repeating: 0, count: 129)
        let firstBytes = fragmentBytes.map { $0[0] }
        for byte in 0..<128 {
            starts[byte + 1] = starts[byte] + firstBytes.filter { Int($0) == byte }.count
        }
        return starts
    }()

    /// Whether a field, query item or JSON key named `name` holds a secret.
    ///
    /// ASCII names (nearly all) are lowercased and searched byte by byte, without allocating. A
    /// name with any other byte takes Unicode lowercasing, which can turn a non-ASCII letter into
    /// an ASCII one (the Kelvin sign `K` becomes `k`), so such a name cannot hide `token`.
    package static func isSensitiveName(_ name: String) -> Bool {
        var name = name
        let ascii: Bool? = name.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes.count, 1)) { lowered in
                for (index, byte) in bytes.enumerated() {
                    lowered[index] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                }
                return isSensitiveLowercasedASCII(UnsafeBufferPointer(rebasing: lowered[..<bytes.count]))
            }
        }
        if let ascii { return ascii }
        let lowered = name.lowercased()
        return sensitiveExactNames.contains(lowered) || sensitiveNameFragments.contains { contains(lowered, $0) }
    }

    /// ``isSensitiveName(_:)`` for a name already lowercased, all ASCII.
    private static func isSensitiveLowercasedASCII(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        for exact in exactNameBytes where exact.count == name.count {
            if exact.withUnsafeBufferPointer({ $0.elementsEqual(name) }) { return true }
        }
        return packedFragments.withUnsafeBufferPointer { packed in
            fragmentSpans.withUnsafeBufferPointer { spans in
                fragmentSpanStarts.withUnsafeBufferPointer { starts in
                    for start in name.indices {
                        let byte = Int(name[start])
                        guard byte < 0x80 else { continue }
                        for index in starts[byte]..<starts[byte + 1] {
                            let span = spans[index]
                            guard span.count <= name.count - start else { continue }
                            var matched = 1
                            while matched < span.count, name[start + matched] == packed[span.offset + matched] {
                                matched += 1
                            }
                            if matched == span.count { return true }
                        }
                    }
                    return false
                }
            }
        }
    }

    /// Whether `haystack` contains `needle`, byte for byte.
    private static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first {
                var matched = 1
                while matched < needle.count, haystack[index + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return true }
            }
            index += 1
        }
        return false
    }

    /// Whether `text` contains `part`, byte for byte in UTF-8. Foundation's `String.contains`
    /// goes through `NSString` on Linux (a `CFStringFind` per call: measured at 15k
    /// instructions per request for the header names alone), and stops at a NUL.
    static func contains(_ text: String, _ part: String) -> Bool {
        var text = text
        var part = part
        return text.withUTF8 { haystack in part.withUTF8 { needle in contains(haystack, needle) } }
    }

    /// What a log record keeps of `body` for its excerpt: all of it up to
    /// ``maxScannedBodyBytes``, else a copy of that much of its start, so a record never keeps a
    /// large body alive.
    static func excerptSource(of body: Data) -> Data {
        body.count <= maxScannedBodyBytes ? body : Data(body.prefix(maxScannedBodyBytes))
    }

    /// At most eight ASCII bytes to look for in a text, each with `memchr` (vectorized by libc):
    /// a few instructions per 32 bytes of text, where a byte-by-byte test of a bit mask took about
    /// 14 per byte (callgrind: 950 instructions per logged request for two URLs).
    struct ASCIISet: Sendable {
        /// The members, one per byte from the lowest, `count` of them.
        private let packed: UInt64
        private let count: Int

        /// - Parameter characters: ASCII characters; the first eight are kept, other characters
        ///   are ignored.
        init(_ characters: StaticString) {
            var packed: UInt64 = 0
            var count = 0
            characters.withUTF8Buffer { bytes in
                for byte in bytes where byte < 0x80 && count < 8 {
                    packed |= UInt64(byte) &<< UInt64(count &* 8)
                    count &+= 1
                }
            }
            self.packed = packed
            self.count = count
        }

        /// Whether `bytes` hold any member.
        func isFound(in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            for index in 0..<count {
                let member = Int32(truncatingIfNeeded: packed &>> UInt64(index &* 8) & 0xFF)
                if memchr(base, member, bytes.count) != nil { return true }
            }
            return false
        }
    }

    /// The byte that starts a URL's query.
    static let queryMark = ASCIISet("?")
    /// The byte that ends a URL's user info. (Scanned as contiguous bytes: `utf8.contains`
    /// walked the view's iterator, ~1,000 instructions for a short URL on every logged request.)
    static let userInfoMark = ASCIISet("@")
    /// The byte that starts a path parameter (`/app;jsessionid=…`).
    static let pathParameterMark = ASCIISet(";")
    /// The bytes that start a URL's user info (its end), query or fragment.
    static let userInfoQueryOrFragmentMarks = ASCIISet("@?#")
    /// The bytes without which a URL holds no secret: ``userInfoQueryOrFragmentMarks`` and the
    /// start of a path parameter. The quick check of a URL found in a header, a body or an error
    /// text (a `Location: /app;jsessionid=…` was shown as it came).
    static let urlSecretMarks = ASCIISet("@?#;")

    /// Whether `text` holds any of `set`'s bytes, scanned as contiguous UTF-8.
    static func containsAny(of set: ASCIISet, in text: String) -> Bool {
        var text = text
        return text.withUTF8 { set.isFound(in: $0) }
    }

    /// The header value to log: the auth scheme is kept (`Bearer <redacted>`), the secret is not.
    /// `alsoRedacting` names more credential headers (an auth service's own, a caller's list),
    /// any case: their values are replaced by name too, however short (scrubbing by value skips
    /// values under ``minimumScrubbedLength``).
    package static func headerValue(name: String, value: String, alsoRedacting: [String] = []) -> String {
        let lowered = name.lowercased()
        guard
            sensitiveHeaders.contains(lowered) || isSensitiveName(lowered) || isCredentialHeaderName(lowered)
                || alsoRedacting.contains(where: { $0.equalsIgnoringASCIICase(name) })
        else {
            return value
        }
        // The scheme ends at the first space byte (a mark after it cannot hide it).
        if lowered.hasSuffix("authorization"), let space = value.utf8.firstIndex(of: UInt8(ascii: " ")) {
            return String(value[..<space]) + " " + placeholder
        }
        return placeholder
    }

    /// Header names that are keys by their form rather than a known name: any `…-key` or
    /// `…_key` (`X-Master-Key`, `X-Parse-Master-Key`, `X-Mashape-Key`, `X-Client-Key`) but the
    /// few that are not secrets, `X-Auth` and any `…authentication…`. `lowered` is lowercased.
    static func isCredentialHeaderName(_ lowered: String) -> Bool {
        if lowered.hasSuffix("-key") || lowered.hasSuffix("_key") { return !nonSecretKeyHeaders.contains(lowered) }
        return lowered == "x-auth" || lowered.contains("authentication")
    }

    /// `…-key` headers that hold no secret: a request's idempotency key, WebSocket's handshake
    /// nonce.
    private static let nonSecretKeyHeaders: Set<String> = [
        "idempotency-key", "x-idempotency-key", "sec-websocket-key", "x-request-key",
    ]

    /// Headers with every credential value replaced, and any header whose value contains one
    /// of `secrets` replaced too (a server echoing a token in a header of its own). Control
    /// characters in names and values are escaped (`PrintableText`).
    package static func headers(
        _ headers: [String: String], scrubbing secrets: [String] = [], alsoRedacting: [String] = []
    ) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers {
            let byName = headerValue(name: name, value: value, alsoRedacting: alsoRedacting)
            let shown =
                byName == value && (isURLHeader(name) || looksLikeURL(value))
                ? urlHeaderValue(value, name: name) : byName
            result[PrintableText.escaping(name)] = PrintableText.escaping(scrub(shown, secrets: secrets))
        }
        return result
    }

    /// Headers whose value is a URL (absolute or relative): shown as ``url(_:)`` shows one.
    private static let urlHeaders: Set<String> = ["location", "content-location", "referer", "link", "refresh"]

    static func isURLHeader(_ name: String) -> Bool {
        urlHeaders.contains(name.lowercased())
    }

    /// Whether a header's value reads as a URL, whatever the header's name (`X-Next:
    /// https://api/items?access_token=…`, `X-Redirect-To: /cb?password=…`): an absolute `http`
    /// or `https` URL, or a path with a query.
    static func looksLikeURL(_ value: String) -> Bool {
        let start = value.utf8.prefix(8).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        if start.starts(with: "http://".utf8) || start.starts(with: "https://".utf8) { return true }
        return value.hasPrefix("/") && containsAny(of: queryOrPathParameterMarks, in: value)
    }

    /// The bytes that start a query or a path parameter.
    private static let queryOrPathParameterMarks = ASCIISet("?;")

    /// A URL header's value without user info, fragment or sensitive query values, as
    /// ``url(_:)`` shows a request's URL: a `Location` can carry a token a server hands out
    /// (`myapp://callback#access_token=…`, `?code=…&session=…`). A value that is not a URL but
    /// holds one of the marks is replaced whole.
    ///
    /// Only `Link` is read as a list of `<reference>`s and only `Refresh` as `5; url=…`: read so
    /// in a `Location`, the text outside the brackets (or before `url=`) was shown as it came,
    /// query and all. The work is linear in the value's length, with no recursion: a hostile
    /// `Refresh` of `0url=` repeated recursed once per repetition (a stack overflow for a
    /// header of a few tens of KiB, quadratic time before that).
    static func urlHeaderValue(_ value: String, name: String) -> String {
        guard containsAny(of: urlSecretMarks, in: value) else { return value }
        if name.equalsIgnoringASCIICase("link") { return linkHeaderValue(value) }
        if name.equalsIgnoringASCIICase("refresh") { return refreshHeaderValue(value) }
        return singleURLValue(value)
    }

    /// `text` with each URL in it (`scheme://…`, up to a blank, a quote or a bracket) shown as
    /// ``url(_:)`` shows one: for error texts, which quote the URL that failed (a token
    /// refresh's `URLError` quoted `?client_secret=…`). Linear in the text's length.
    static func redactingURLs(in text: String) -> String {
        guard containsAny(of: urlSecretMarks, in: text), text.range(of: "://", options: .literal) != nil else {
            return text
        }
        var result = ""
        var rest = Substring(text)
        while let marker = rest.range(of: "://", options: .literal) {
            var start = marker.lowerBound
            while start > rest.startIndex {
                let before = rest.index(before: start)
                let character = rest[before]
                guard character.isASCII,
                    character.isLetter || character.isNumber || character == "+" || character == "-"
                        || character == "."
                else { break }
                start = before
            }
            var end = marker.upperBound
            while end < rest.endIndex, !Self.urlTextEnds(rest[end]) { end = rest.index(after: end) }
            result += rest[..<start]
            let candidate = String(rest[start..<end])
            result += start == marker.lowerBound ? candidate : singleURLValue(candidate)
            rest = rest[end...]
        }
        return result + rest
    }

    /// Whether `character` ends a URL quoted in text: a blank, or a character a URL cannot hold
    /// (`"`, `<`, `>`, `` ` ``, `{`, `}`). Not `'`, `(`, `)`, `[` or `]`, which a URL can: cut
    /// there, `?scope=(openid)&client_secret=…` left the secret after the cut as it was.
    private static func urlTextEnds(_ character: Character) -> Bool {
        character.isWhitespace || "\"<>{}`".contains(character)
    }

    /// One URL as ``url(_:)`` shows it; a value that does not parse as one, and holds one of the
    /// marks, is replaced whole.
    private static func singleURLValue(_ value: String) -> String {
        guard containsAny(of: urlSecretMarks, in: value) else { return value }
        guard let parsed = URL(string: value.trimmingCharacters(in: .whitespaces)) else { return placeholder }
        let shown = url(parsed)
        return shown.hasPrefix("<") ? placeholder : shown
    }

    /// `Link: <url>; rel=next, <url>; rel=last` (RFC 8288): each reference on its own (read as
    /// one URL, a second link's token sat in the first one's last query value); the text between
    /// them (the parameters) as it is unless it holds one of the marks, then replaced; a
    /// reference left unclosed likewise.
    private static func linkHeaderValue(_ value: String) -> String {
        func between(_ text: Substring) -> String {
            containsAny(of: userInfoQueryOrFragmentMarks, in: String(text)) ? placeholder : String(text)
        }
        var result = ""
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += between(rest[..<open]) + "<" + singleURLValue(String(rest[rest.index(after: open)..<close])) + ">"
            rest = rest[rest.index(after: close)...]
        }
        return result + between(rest)
    }

    /// `Refresh: 5; url=…` or `5; …`: the delay as it is and the URL as ``singleURLValue(_:)``
    /// shows it; anything else before `url=` (or before the first `;`, without `url=`) replaces
    /// the value whole.
    private static func refreshHeaderValue(_ value: String) -> String {
        func isDelay(_ text: Substring) -> Bool {
            text.allSatisfy { $0.isASCIIDigitCharacter || " \t;,.".contains($0) }
        }
        if let marker = value.range(of: "url=", options: .caseInsensitive), isDelay(value[..<marker.lowerBound]) {
            return value[..<marker.upperBound] + singleURLValue(String(value[marker.upperBound...]))
        }
        // `5; https://…` (HTML allows the URL without `url=`): the URL after the first `;`.
        if let separator = value.firstIndex(of: ";"), isDelay(value[..<separator]) {
            var start = value.index(after: separator)
            while start < value.endIndex, value[start] == " " || value[start] == "\t" {
                start = value.index(after: start)
            }
            return value[..<start] + singleURLValue(String(value[start...]))
        }
        return placeholder
    }

    /// The shortest credential value that is scrubbed by value: shorter ones would blank out
    /// ordinary text.
    static let minimumScrubbedLength = 4

    /// The credential values `request` carries, for scrubbing by value what a server echoes
    /// back (in a body, a header, an error text) under a name that does not look secret.
    ///
    /// The values of the credential headers (those whose names ``headerValue(name:value:)``
    /// redacts, plus `alsoHeaders`, such as an auth service's own header), whole and without
    /// their auth scheme; each cookie's value; and the sensitive query values. Longest first, so
    /// a value is scrubbed before any part of it.
    package static func credentialValues(of request: URLRequest, alsoHeaders: [String] = []) -> [String] {
        var values: Set<String> = []
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            // Every name in `sensitiveHeaders` holds one of the fragments `isSensitiveName`
            // looks for (a test checks it), so one case-folding scan decides, with no lowercased
            // copy of the name.
            guard isSensitiveName(name) || alsoHeaders.contains(where: { $0.equalsIgnoringASCIICase(name) }) else {
                // A header whose name says it holds a credential (`X-Master-Key`, `PRIVATE-TOKEN`:
                // `Origin.isCredentialName`) has its value scrubbed elsewhere too (a server
                // echoing it under a name that is no secret in a body), when it reads as a key:
                // 12 bytes or more, no blank. Any `…-Key` made `X-Sort-Key: name` scrub each
                // `name` from a logged body.
                if Origin.isCredentialName(name) {
                    let trimmed = value.trimmingCharacters(in: .whitespaces)
                    if trimmed.utf8.count >= 12, !trimmed.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) {
                        values.insert(trimmed)
                    }
                }
                continue
            }
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            values.insert(trimmed)
            // Split on bytes: a mark after a space, `;` or `=` joins it into one `Character`,
            // and a cookie's value was then never scrubbed on its own.
            if let space = trimmed.utf8.firstIndex(of: UInt8(ascii: " ")) {
                values.insert(String(trimmed[trimmed.utf8.index(after: space)...]).trimmingCharacters(in: .whitespaces))
            }
            if name.equalsIgnoringASCIICase("cookie") {
                for pair in trimmed.utf8.split(separator: UInt8(ascii: ";")) {
                    let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1)
                    if parts.count == 2 { values.insert(Substring(parts[1]).trimmingCharacters(in: .whitespaces)) }
                }
            }
        }
        if let url = request.url {
            let text = url.absoluteString
            if containsAny(of: queryMark, in: text),
                let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
            {
                for item in components.queryItems ?? [] where isSensitiveName(item.name) {
                    if let value = item.value { values.insert(value) }
                }
                // As written in the URL too (its own percent-encoding, which a server echoes).
                for item in components.percentEncodedQueryItems ?? [] where isSensitiveName(item.name) {
                    if let value = item.value { values.insert(value) }
                }
            }
            // The password of the user info: removed from logged URLs, and scrubbed wherever a
            // server echoes it.
            if containsAny(of: userInfoMark, in: text),
                let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
            {
                if let password = components.password { values.insert(password) }
                if let password = components.percentEncodedPassword { values.insert(password) }
                // The user name too when it is the credential (`https://sk_live_…@host`, no
                // password; a plain name such as `admin` beside a password would be blanked
                // everywhere), and the Basic credential the transports make of both, which a
                // server may echo.
                if components.password?.isEmpty ?? true {
                    if let user = components.user { values.insert(user) }
                    if let user = components.percentEncodedUser { values.insert(user) }
                }
                if let user = components.user {
                    values.insert(Data("\(user):\(components.password ?? "")".utf8).base64EncodedString())
                }
            }
        }
        // The forms a value takes when a server echoes it inside other text: percent-encoded in
        // a URL (a `Location`, a link), form-encoded, and escaped in JSON (`"`, `\`, and `/`,
        // which base64 tokens hold).
        for value in values {
            values.insert(PercentEncoding.queryComponent(value))
            values.insert(PercentEncoding.formComponent(value, spaceAsPlus: true))
            if value.utf8.contains(where: {
                $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "/")
            }) {
                values.insert(
                    value.replacingOccurrences(of: "\\", with: "\\\\", options: .literal).replacingOccurrences(
                        of: "\"", with: "\\\"", options: .literal
                    )
                    .replacingOccurrences(of: "/", with: "\\/", options: .literal))
                values.insert(value.replacingOccurrences(of: "/", with: "\\/", options: .literal))
            }
        }
        if values.isEmpty { return [] }
        return values.filter { $0.count >= minimumScrubbedLength }.sorted { $0.count > $1.count }
    }

    /// `text` with every occurrence of each of `secrets` replaced by the placeholder.
    ///
    /// A few secrets (nearly every request has none to four) are looked for one after the other;
    /// many go through ``scrubInOnePass(_:secrets:)``: one after the other costs the text's length
    /// times their number, minutes for a caller's URL with 50,000 secret-named query items.
    package static func scrub(_ text: String, secrets: [String]) -> String {
        if secrets.count > 16 { return scrubInOnePass(text, secrets: secrets) }
        var result = text
        for secret in secrets where contains(result, secret) {
            result = result.replacingOccurrences(of: secret, with: placeholder, options: .literal)
        }
        return result
    }

    /// ``scrub(_:secrets:)`` in one pass over the text's bytes: at each position whose first
    /// four bytes start a secret, the secrets of each length (longest first) are looked up in a
    /// set, so the work is the text's length times the number of distinct lengths (small), not
    /// times the number of secrets. Secrets are UTF-8 text, so a match always starts and ends on
    /// a character boundary. Secrets under four bytes are replaced one after the other afterwards.
    private static func scrubInOnePass(_ text: String, secrets: [String]) -> String {
        var byLength: [Int: Set<[UInt8]>] = [:]
        var starts = Set<UInt32>()
        var short: [String] = []
        for secret in secrets {
            let bytes = Array(secret.utf8)
            guard bytes.count >= 4 else {
                short.append(secret)
                continue
            }
            byLength[bytes.count, default: []].insert(bytes)
            starts.insert(fourBytes(bytes, at: 0))
        }
        let groups = byLength.sorted { $0.key > $1.key }
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        var changed = false
        while index < bytes.count {
            var matched = 0
            if index + 4 <= bytes.count, starts.contains(fourBytes(bytes, at: index)) {
                for (length, members) in groups where index + length <= bytes.count {
                    if members.contains(Array(bytes[index..<(index + length)])) {
                        matched = length
                        break
                    }
                }
            }
            if matched > 0 {
                output.append(contentsOf: placeholder.utf8)
                index += matched
                changed = true
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        var result = changed ? String(decoding: output, as: UTF8.self) : text
        for secret in short where contains(result, secret) {
            result = result.replacingOccurrences(of: secret, with: placeholder, options: .literal)
        }
        return result
    }

    /// The four bytes at `index` as one number (the caller checked there are four).
    private static func fourBytes(_ bytes: [UInt8], at index: Int) -> UInt32 {
        UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
            | UInt32(bytes[index + 3])
    }

    /// The URL as text, with user info removed and sensitive query values replaced.
    package static func url(_ url: URL?) -> String {
        guard let url else { return "<no URL>" }
        // Most URLs have no user info, query or fragment: nothing to remove, and parsing them
        // into components (several microseconds on Linux) is skipped.
        let text = url.absoluteString
        if !containsAny(of: userInfoQueryOrFragmentMarks, in: text) {
            return redactPathParameters(text)
        }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return "<unparseable URL>"
        }
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        // The placeholder is not valid in a URL, so the query is appended as text rather than
        // set on the components (which would trap).
        let query = components.percentEncodedQuery
        components.percentEncodedQuery = nil
        components.fragment = nil
        let base = redactPathParameters(components.string ?? "<unparseable URL>")
        guard let query, !query.isEmpty else { return base }
        return base + "?" + redactForm(query)
    }

    /// The start of a body as text, at most `limit` bytes, with JSON and form secrets replaced.
    ///
    /// Only the first ``maxScannedBodyBytes`` are looked at, however large the body: a body that
    /// fits is parsed as JSON (and re-serialized with sorted keys); a larger one, or JSON that does
    /// not parse, has its prefix redacted by a tolerant scan.
    ///
    /// Each of `secrets` (see ``credentialValues(of:alsoHeaders:)``) is replaced wherever it
    /// appears, before the excerpt is cut, so a cut never leaves part of one.
    ///
    /// `totalSize` is the size of the whole body when `data` is only its start (at least its
    /// first ``maxScannedBodyBytes``, as a log record keeps it); `nil` when `data` is the body.
    static func bodyExcerpt(
        _ data: Data, totalSize: Int? = nil, limit: Int, scrubbing secrets: [String] = []
    ) -> String {
        let size = max(totalSize ?? data.count, data.count)
        if size == 0 { return "<empty>" }
        let limit = max(0, limit)
        var text: String?
        if size <= maxScannedBodyBytes,
            let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let redacted = try? JSONSerialization.data(
                withJSONObject: redactJSON(json), options: [.sortedKeys, .fragmentsAllowed]),
            let string = String(data: redacted, encoding: .utf8)
        {
            text = string
        }
        if text == nil {
            let prefix = [UInt8](data.prefix(maxScannedBodyBytes))
            // NUL is binary too: UTF-16 text passes as UTF-8, with a NUL in every key.
            guard !prefix.contains(0), isUTF8(prefix, truncated: size > prefix.count) else {
                return "<\(size) bytes of binary data>"
            }
            // Whatever it starts with (a byte-order mark, `)]}'`, a log line), every `"name":`
            // in it is redacted as JSON: a body JSON cannot parse (NDJSON, a trailing comma, a
            // cut) still holds fields.
            let longestSecret = secrets.map(\.utf8.count).max() ?? 0
            let string = redactJSONPrefix(prefix[...], outputLimit: limit + longestSecret)
            // A form only when it does not look like JSON: a JSON value holding `?v=3` read as a
            // form lost everything up to the next `&`.
            if looksLikeMarkup(string) {
                text = redactMarkup(string)
            } else {
                text = looksLikeForm(string, bytes: prefix) ? redactForm(string) : string
            }
        }
        text = text.map { scrub($0, secrets: secrets) }
        let utf8 = Array((text ?? "").utf8)
        // Cut first, then escaped: the excerpt is one line, whatever control characters the
        // server put in it (at most a few times `limit` bytes).
        if utf8.count <= limit && size <= maxScannedBodyBytes { return PrintableText.escaping(text ?? "") }
        return PrintableText.escaping(String(decoding: utf8.prefix(limit), as: UTF8.self)) + "… (\(size) bytes)"
    }

    /// `step` with a redirect's target scrubbed of `secrets`.
    static func scrub(_ step: ExchangeStep, secrets: [String]) -> ExchangeStep {
        guard case .redirected(let status, let target, let stripped) = step else { return step }
        return .redirected(statusCode: status, to: scrub(target, secrets: secrets), credentialsStripped: stripped)
    }

    /// `metrics` with every URL in it (each exchange's, each redirect's target) scrubbed of
    /// `secrets`.
    ///
    /// Nearly always no URL holds one (the transports record URLs already redacted of query
    /// secrets and user info), so they are looked for first and the metrics are copied only
    /// when one is found.
    static func scrub(_ metrics: RequestMetrics, secrets: [String]) -> RequestMetrics {
        guard !secrets.isEmpty, containsAny(of: secrets, in: metrics) else { return metrics }
        var metrics = metrics
        for index in metrics.transactions.indices {
            metrics.transactions[index].url = scrub(metrics.transactions[index].url, secrets: secrets)
        }
        metrics.steps = metrics.steps.map { scrub($0, secrets: secrets) }
        return metrics
    }

    /// Whether any URL in `metrics` (an exchange's, a redirect's target) contains one of `secrets`.
    private static func containsAny(of secrets: [String], in metrics: RequestMetrics) -> Bool {
        func holdsSecret(_ text: String) -> Bool { secrets.contains { contains(text, $0) } }
        if metrics.transactions.contains(where: { holdsSecret($0.url) }) { return true }
        return metrics.steps.contains { step in
            if case .redirected(_, let target, _) = step { return holdsSecret(target) }
            return false
        }
    }

    /// Whether `bytes` are UTF-8, allowing an incomplete character at the end when they are the
    /// start of a longer body.
    private static func isUTF8(_ bytes: [UInt8], truncated: Bool) -> Bool {
        let tolerated = truncated ? min(3, bytes.count) : 0
        for dropped in 0...tolerated where String(validating: bytes.dropLast(dropped), as: UTF8.self) != nil {
            return true
        }
        return false
    }

    /// Whether a body reads as form-encoded (`a=1&b=2`): its text holds `=`, and its bytes do not
    /// look like JSON (a JSON value holding `?v=3` read as a form lost everything up to the next
    /// `&`). A raw space does not make it prose: a careless form (`password=hunter 2`) is still
    /// one; prose read as a form loses what follows a secret-named `name=` up to the next `&`
    /// (more redacted than needed, never less). The one rule of log records and cURL commands.
    static func looksLikeForm<Bytes: Collection<UInt8>>(_ text: String, bytes: Bytes) -> Bool {
        text.utf8.contains(UInt8(ascii: "=")) && !looksLikeJSON(bytes)
    }

    /// Whether `text` starts like markup: a multipart body's boundary line (`--`) or an XML or
    /// HTML tag (`<`), after whitespace; or is a multipart body with a preamble (a later line
    /// starting with `--` that a part's `Content-Disposition:` or `Content-Type:` follows). Such
    /// a body is not read as a form, whatever `=` it holds (`Content-Disposition: form-data;
    /// name="…"` read as a form hid nothing).
    static func looksLikeMarkup(_ text: String) -> Bool {
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" || $0 == "\u{FEFF}" }
        if trimmed.hasPrefix("--") || trimmed.hasPrefix("<") { return true }
        // A multipart body with a preamble before its first boundary line.
        var text = text
        return text.withUTF8 { MarkupScanner.boundaryLine(in: $0, from: 0) != nil }
    }

    /// Whether `bytes` start (after whitespace and a UTF-8 byte-order mark) with `{` or `[`.
    static func looksLikeJSON<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        guard let first = rest.first(where: { !isJSONWhitespace($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Redacts JSON text that may be cut anywhere (the start of a large body), or malformed: the
    /// value of every key named like a secret becomes `"<redacted>"`, whatever its type, and a
    /// value cut off by the end of `bytes` is redacted too. Stops once `outputLimit` bytes are
    /// written. Everything else is kept as it is.
    static func redactJSONPrefix(_ bytes: ArraySlice<UInt8>, outputLimit: Int) -> String {
        String(decoding: redactedJSONBytes(bytes, outputLimit: outputLimit), as: UTF8.self)
    }

    /// ``redactJSONPrefix(_:outputLimit:)`` as bytes: the bytes that are not redacted are kept
    /// as they are, UTF-8 or not.
    static func redactedJSONBytes(_ bytes: ArraySlice<UInt8>, outputLimit: Int) -> [UInt8] {
        let quote = UInt8(ascii: "\""), colon = UInt8(ascii: ":")
        var output: [UInt8] = []
        output.reserveCapacity(min(bytes.count, outputLimit) + 16)
        var index = bytes.startIndex
        while index < bytes.endIndex && output.count <= outputLimit {
            guard bytes[index] == quote else {
                output.append(bytes[index])
                index += 1
                continue
            }
            let keyStart = index
            let (stringEnd, closed) = endOfString(bytes, from: index)
            var afterName = stringEnd
            while afterName < bytes.endIndex && isJSONWhitespace(bytes[afterName]) { afterName += 1 }
            output.append(contentsOf: bytes[keyStart..<stringEnd])
            guard closed, afterName < bytes.endIndex, bytes[afterName] == colon else {
                index = stringEnd
                continue
            }
            // A key: copy up to and including the colon, then redact the value if need be.
            output.append(contentsOf: bytes[stringEnd...afterName])
            index = afterName + 1
            let name = decodedJSONString(bytes[keyStart..<stringEnd])
            let sensitive = isSensitiveName(name)
            guard sensitive || jwtValuedNames.contains(name.lowercased()) else { continue }
            while index < bytes.endIndex && isJSONWhitespace(bytes[index]) {
                output.append(bytes[index])
                index += 1
            }
            // `refresh`/`access` hide a JWT (`"eyJ…`) only, as in a parsed body.
            if !sensitive, !startsLikeJWT(bytes, at: index) { continue }
            index = endOfValue(bytes, from: index)
            output.append(contentsOf: Array("\"\(placeholder)\"".utf8))
        }
        return output
    }
    /// Whether the JSON value at `start` is a string whose text starts `eyJ` (a JWT's header),
    /// escapes decoded (`"\u0065yJ…"` is one); a value cut off before that can be told counts
    /// as one.
    private static func startsLikeJWT(_ bytes: ArraySlice<UInt8>, at start: Int) -> Bool {
        let jwt = Array("eyJ".utf8)
        guard start < bytes.endIndex else { return true }
        guard bytes[start] == UInt8(ascii: "\"") else { return false }
        var decoded: [UInt8] = []
        var index = start + 1
        while decoded.count < jwt.count {
            guard index < bytes.endIndex else { return true }
            var byte = bytes[index]
            var width = 1
            if byte == UInt8(ascii: "\"") { return false }
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < bytes.endIndex else { return true }
                switch bytes[index + 1] {
                case UInt8(ascii: "u"):
                    guard index + 5 < bytes.endIndex else { return true }
                    let hex = String(decoding: bytes[(index + 2)...(index + 5)], as: UTF8.self)
                    guard let code = UInt32(hex, radix: 16), code < 0x80 else { return false }
                    byte = UInt8(code)
                    width = 6
                default:
                    // Every other escape (`\"`, `\\`, `\/`, `\n`…) is no letter of `eyJ`.
                    return false
                }
            }
            decoded.append(byte)
            guard jwt.starts(with: decoded) else { return false }
            index += width
        }
        return true
    }

    /// The index after the string starting at `start` (a quote), and whether it was closed
    /// before the end of `bytes`.
    private static func endOfString(_ bytes: ArraySlice<UInt8>, from start: Int) -> (end: Int, closed: Bool) {
        var index = start + 1
        while index < bytes.endIndex {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return (index + 1, true)
            default: index += 1
            }
        }
        return (bytes.endIndex, false)
    }

    /// The index after the JSON value starting at `start`, or the end of `bytes` when it is cut
    /// off. Tolerant: it only tracks strings and nesting.
    private static func endOfValue(_ bytes: ArraySlice<UInt8>, from start: Int) -> Int {
        guard start < bytes.endIndex else { return start }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return endOfString(bytes, from: start).end
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.endIndex {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index = endOfString(bytes, from: index).end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default:
                    break
                }
                index += 1
            }
            return bytes.endIndex
        default:
            var index = start
            while index < bytes.endIndex {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: return index
                default: index += 1
                }
            }
            return bytes.endIndex
        }
    }

    /// The text of a closed JSON string token (quotes included), with escapes such as `\u0043`
    /// decoded so they cannot hide a name; the raw text when it does not decode.
    private static func decodedJSONString(_ token: ArraySlice<UInt8>) -> String {
        if token.contains(UInt8(ascii: "\\")),
            let decoded = try? JSONSerialization.jsonObject(with: Data(token), options: [.fragmentsAllowed]) as? String
        {
            return decoded
        }
        return String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
    }

    package static func redactJSON(_ value: Any) -> Any {
        redactJSON(value, nestedJSONLeft: 2)
    }

    /// ``redactJSON(_:)``, also looking into string values: a URL (`scheme://…`, no blanks) is
    /// shown as ``url(_:)`` shows one (a pre-signed `upload_url` carries `X-Amz-Signature`), and a
    /// string that is JSON itself (an API gateway's `"body":"{\"access_token\":…}"`) is redacted
    /// and written back, to `nestedJSONLeft` levels of such strings.
    private static func redactJSON(_ value: Any, nestedJSONLeft: Int) -> Any {
        if let dictionary = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, inner) in dictionary {
                let jwt = jwtValuedNames.contains(key.lowercased()) && (inner as? String)?.hasPrefix("eyJ") == true
                result[key] =
                    isSensitiveName(key) || jwt ? placeholder : redactJSON(inner, nestedJSONLeft: nestedJSONLeft)
            }
            return result
        }
        if let array = value as? [Any] {
            return array.map { redactJSON($0, nestedJSONLeft: nestedJSONLeft) }
        }
        if let string = value as? String {
            return redactJSONString(string, nestedJSONLeft: nestedJSONLeft)
        }
        return value
    }

    /// A JSON string value as ``redactJSON(_:nestedJSONLeft:)`` shows it.
    private static func redactJSONString(_ string: String, nestedJSONLeft: Int) -> String {
        let bytes = string.utf8
        if nestedJSONLeft > 0, looksLikeJSON(bytes),
            let inner = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]),
            let redacted = try? JSONSerialization.data(
                withJSONObject: redactJSON(inner, nestedJSONLeft: nestedJSONLeft - 1),
                options: [.sortedKeys, .fragmentsAllowed]),
            let unchanged = try? JSONSerialization.data(
                withJSONObject: inner, options: [.sortedKeys, .fragmentsAllowed])
        {
            // Written back only when something was redacted: re-serialized, keys are sorted and
            // numbers normalized, and a string a webhook signed would no longer match.
            return redacted == unchanged ? string : String(decoding: redacted, as: UTF8.self)
        }
        guard containsAny(of: urlSecretMarks, in: string), isURLText(bytes),
            let parsed = URL(string: string)
        else { return string }
        // Rewritten only when it holds a secret: ``url(_:)`` also drops a fragment and user info
        // that are no secret (`https://docs.example/a#b`).
        let shown = url(parsed)
        let fragmentHoldsSecret = parsed.fragment.map { redactForm($0) != $0 } ?? false
        guard shown.contains(placeholder) || parsed.user != nil || fragmentHoldsSecret else { return string }
        return shown.hasPrefix("<") ? string : shown
    }

    /// Whether `bytes` are a URL with a scheme and an authority (`https://…`, the `://` within
    /// the first 40 bytes) and no blanks or control bytes: text that merely holds a `?` is never
    /// rewritten.
    private static func isURLText(_ bytes: String.UTF8View) -> Bool {
        guard let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first | 0x20) else {
            return false
        }
        // How much of `://` was just seen (0 to 3); 3 once the scheme is over.
        var matched = 0
        var position = 0
        for byte in bytes {
            if byte <= 0x20 || byte == 0x7F { return false }
            if matched < 3 {
                position += 1
                if position > 40 { return false }
                switch (matched, byte) {
                case (0, UInt8(ascii: ":")): matched = 1
                case (1, UInt8(ascii: "/")): matched = 2
                case (2, UInt8(ascii: "/")): matched = 3
                default: matched = byte == UInt8(ascii: ":") ? 1 : 0
                }
            }
        }
        return matched == 3
    }

    /// Names whose values are hidden in a query or a form as shown, but that are not credential
    /// names everywhere (``isSensitiveName(_:)``): OAuth's authorization `code` (`?code=…` on a
    /// redirect, `code=…` in the token request), what a user types (`pw`, `pin`, `otp`,
    /// `totp`) and `bearer`/`ticket`. In JSON `code` is nearly always an error's, and taken as
    /// credential names their values (`?refresh=true`) were scrubbed from every text and kept
    /// URLs out of the ETag store.
    private static let queryOnlySensitiveNames: Set<String> = ["code", "pw", "pin", "otp", "totp", "bearer", "ticket"]

    /// Whether a form field or query item named `name` is hidden: a credential name
    /// (``isSensitiveName(_:)``) or one of ``queryOnlySensitiveNames``.
    static func isSensitiveFormName(_ name: String) -> Bool {
        isSensitiveName(name) || queryOnlySensitiveNames.contains(name.lowercased())
    }

    /// JSON keys whose value is hidden when it is a JWT (`eyJ…`): the token pair of Django's
    /// SimpleJWT (`{"refresh":"eyJ…","access":"eyJ…"}`). Any other value (`"access":"read"`) is
    /// kept.
    private static let jwtValuedNames: Set<String> = ["refresh", "access"]

    /// Redacts `name=value` pairs in a form or query string, separated by `&` or `;` (the older
    /// separator servers still accept: `?a=1;api_key=…`).
    ///
    /// Split on the `&` byte: a `Character` split missed an `&` that a combining mark after it,
    /// or a prepended mark (U+0600) before it, joined into one character, and the secret after
    /// it was shown as part of a harmless first pair (`note=hi\u{600}&password=…`).
    package static func redactForm(_ form: String) -> String {
        form.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
            .map { redactFormPart(Substring($0)) }.joined(separator: "&")
    }

    /// One `&`-separated part of a form. Its pairs are read up to the first sensitive name, which
    /// hides everything after it up to the `&` (its value may hold a `;`: `password=ab;cd`).
    /// Pairs are separated by `;`, and by a `?` (legal inside a query): `next=/cb?access_token=…`
    /// is read as `next=/cb` and `access_token=…`. A query nested in a value is often
    /// percent-encoded (`next=%2Fcb%3Faccess_token%3D…`), so an encoded `?`, `&` or `;` separates
    /// pairs too and an encoded `=` ends a name; the text shown keeps its encoding.
    private static func redactFormPart(_ part: Substring) -> String {
        var shown = ""
        var rest = part
        while true {
            let (end, separatorEnd) = nextFormSeparator(in: rest)
            let pair = rest[..<end]
            if let (nameEnd, valueStart) = formNameEnd(in: pair) {
                let name = String(pair[..<nameEnd])
                if isSensitiveFormName(name.removingPercentEncoding ?? name) {
                    return shown + pair[..<valueStart] + placeholder
                }
            }
            shown += pair
            guard end < rest.endIndex else { return shown }
            shown += rest[end..<separatorEnd]
            rest = rest[separatorEnd...]
        }
    }

    /// Where the first pair separator in `text` starts and ends: `;`, `?`, or `%3F`, `%26`,
    /// `%3B` in either case; both are `text.endIndex` when there is none. Read as bytes: a
    /// combining mark after a `;` cannot hide it, and nothing is allocated.
    private static func nextFormSeparator(in text: Substring) -> (start: Substring.Index, end: Substring.Index) {
        let bytes = text.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: ";") || byte == UInt8(ascii: "?") { return (index, bytes.index(after: index)) }
            if byte == UInt8(ascii: "%"), let end = encodedByteEnd(in: bytes, at: index, oneOf: 0x3F, 0x26, 0x3B) {
                return (index, end)
            }
            index = bytes.index(after: index)
        }
        return (text.endIndex, text.endIndex)
    }

    /// Where the name of `pair` ends and its value starts: at its first `=`, or `%3D`.
    private static func formNameEnd(in pair: Substring) -> (nameEnd: Substring.Index, valueStart: Substring.Index)? {
        let bytes = pair.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "=") { return (index, bytes.index(after: index)) }
            if byte == UInt8(ascii: "%"), let end = encodedByteEnd(in: bytes, at: index, oneOf: 0x3D) {
                return (index, end)
            }
            index = bytes.index(after: index)
        }
        return nil
    }

    /// The end of the percent-encoded byte at `index` (a `%`) when it encodes one of `codes`.
    private static func encodedByteEnd(
        in bytes: Substring.UTF8View, at index: Substring.Index, oneOf codes: UInt8...
    ) -> Substring.Index? {
        let high = bytes.index(after: index)
        guard high < bytes.endIndex else { return nil }
        let low = bytes.index(after: high)
        guard low < bytes.endIndex, let first = PercentEncoding.hexValue(bytes[high]),
            let second = PercentEncoding.hexValue(bytes[low])
        else { return nil }
        return codes.contains(first << 4 | second) ? bytes.index(after: low) : nil
    }

    /// `url`'s text with each path parameter named like a secret replaced (`/app;jsessionid=…`,
    /// `/a;token=…/b`). `text` ends at the path (no query or fragment); without a `://`, it is a
    /// relative reference, all path (a `Location: /app;jsessionid=…`).
    static func redactPathParameters(_ text: String) -> String {
        // Bytes, not `contains(";")`: with Foundation imported, that is `NSString`'s search
        // (~8,700 instructions per logged request on Linux, most of the logger's cost then).
        guard containsAny(of: pathParameterMark, in: text) else { return text }
        let pathStart: String.Index
        if let scheme = text.range(of: "://", options: .literal), isScheme(text[..<scheme.lowerBound]) {
            guard let start = text[scheme.upperBound...].firstIndex(of: "/") else { return text }
            pathStart = start
        } else {
            pathStart = text.startIndex
        }
        let path = text[pathStart...].split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.utf8.contains(UInt8(ascii: ";")) && segment.utf8.contains(UInt8(ascii: "="))
                ? redactForm(String(segment)) : String(segment)
        }
        return text[..<pathStart] + path.joined(separator: "/")
    }

    /// Whether `text` is a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`):
    /// a `://` later in a relative reference's path (`/a;jsessionid=…/to/https://…`) does not
    /// start an authority.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }
}

extension Character {
    /// Whether this is one of `0`–`9`.
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
