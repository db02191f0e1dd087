import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The checks every request passes before a byte of it is sent, on every transport and in both
/// compatibility modules:
///
/// - Only `http` and `https` URLs with a host are sent.
/// - The method is an RFC 9110 token, so it cannot rewrite the request line or add one.
/// - Header names are RFC 9110 tokens (`!#$%&'*+-.^_`|~`, digits and letters), so a name can
///   never carry CR/LF and inject a header line.
/// - Header values contain no CR, LF or NUL. Foundation silently drops such a value when it is
///   set on a `URLRequest` (the request would go out without that header, even
///   `Authorization`), so values are checked **before** they are set: use ``setHeader(_:named:on:)``.
///
/// A violation is ``TransportError`` with code ``TransportError/Code/invalidRequest``; its message
/// names the header, never its value (the value may be a credential).
public enum RequestValidator {
    /// Whether `name` is a valid header field name: a non-empty RFC 9110 token.
    public static func isValidHeaderName(_ name: String) -> Bool {
        // A native string is scanned as contiguous bytes (iterating `String.UTF8View` costs
        // several times as much per byte); a bridged one takes the view.
        if let valid = name.utf8.withContiguousStorageIfAvailable({ bytes in
            !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
        }) {
            return valid
        }
        var count = 0
        for byte in name.utf8 {
            guard isTokenByte(byte) else { return false }
            count += 1
        }
        return count > 0
    }

    /// Whether `value` may be sent as a header field value: no CR, LF or NUL.
    ///
    /// Other control characters and non-ASCII bytes are left to the transport (libcurl sends
    /// them as they are; RFC 9110 calls them obsolete but not forbidden).
    public static func isValidHeaderValue(_ value: String) -> Bool {
        func isForbidden(_ byte: UInt8) -> Bool { byte == 0x0D || byte == 0x0A || byte == 0x00 }
        if let valid = value.utf8.withContiguousStorageIfAvailable({ !$0.contains(where: isForbidden) }) {
            return valid
        }
        return !value.utf8.contains(where: isForbidden)
    }

    /// Whether `method` may be sent as a request method: a non-empty RFC 9110 token (§9.1), so
    /// it cannot carry a space, CR, LF or NUL into the request line. Neither libcurl nor
    /// corelibs checks it: `"GET / HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET"` went out as two
    /// requests, the first with a header of the caller's making.
    public static func isValidMethod(_ method: String) -> Bool {
        isValidHeaderName(method)
    }

    /// Checks a request's method (`nil` is `GET`, and valid); the error quotes the method with
    /// its control characters escaped.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    public static func validateMethod(_ method: String?, url: URL?) throws(TransportError) {
        guard let method, !isValidMethod(method) else { return }
        throw TransportError(
            .invalidRequest, url: url,
            message:
                "The method \(method.isEmpty ? "\"\"" : describeName(method)) is not a valid HTTP method "
                + "(RFC 9110 token); the request was not sent.")
    }

    /// The method as every transport sends it: uppercased, `GET` for `nil`. Method tokens are
    /// case-sensitive (RFC 9110 §9.1), and corelibs uppercases `post`, `get`, `head`, `put` and
    /// `delete` when they are set on a `URLRequest` but leaves `patch` or `Options` as given:
    /// without this, `patch` went out as `PATCH` on one transport and `patch` on the other.
    /// A method with no lowercase letter (every usual one) is returned as it is, without
    /// `uppercased()`'s copy, and so is one with a non-ASCII byte: it is not a token, and
    /// uppercasing must not make it one (`"getß"` would become `"GETSS"`).
    package static func uppercasedMethod(_ method: String?) -> String {
        guard let method else { return "GET" }
        var hasLowercase = false
        for byte in method.utf8 {
            if byte >= 0x80 { return method }
            if (0x61...0x7A).contains(byte) { hasLowercase = true }
        }
        return hasLowercase ? method.uppercased() : method
    }

    /// `request` as it is sent when a `URLSession` sends it: checked (``validate(_:)``), its
    /// method uppercased (``uppercasedMethod(_:)``), and a `Content-Length` that agrees with
    /// its body left out (``isFramingField(name:value:bodyLength:url:)``). What
    /// ``URLSessionTransport`` and both compatibility modules' own `URLSession` paths send;
    /// ``CurlTransport`` applies the same rules as it builds its header list.
    ///
    /// - Parameter bodyLength: the size of a body that is not `httpBody` (an upload from a
    ///   file); by default `httpBody`'s, or unknown for an `httpBodyStream`.
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    package static func prepared(_ request: URLRequest, bodyLength: Int64? = nil) throws(TransportError) -> URLRequest {
        try validate(request)
        var sent = request
        if let method = request.httpMethod, uppercasedMethod(method) != method {
            sent.httpMethod = uppercasedMethod(method)
        }
        let length = bodyLength ?? (request.httpBodyStream == nil ? Int64(request.httpBody?.count ?? 0) : nil)
        for (name, value) in request.allHTTPHeaderFields ?? [:]
        where try isFramingField(name: name, value: value, bodyLength: length, url: request.url) {
            sent.setValue(nil, forHTTPHeaderField: name)
        }
        return sent
    }

    /// Whether the request header `name: value` is framing the transport does itself, to be
    /// left out; throws when it contradicts the body that will be sent.
    ///
    /// The transport frames the body (`Content-Length`, or chunks for a body stream), so a
    /// caller's own framing is at best redundant: a `Content-Length` equal to `bodyLength` is
    /// dropped; a different or malformed one, or any `Transfer-Encoding` or `Host`, is refused. Sent as
    /// given, a shorter length left the rest of the body on the connection (read as the start
    /// of the next request on it), a longer one held the server waiting until the idle timeout,
    /// on both transports. `bodyLength` is `nil` when the body is a stream of unknown length:
    /// its `Content-Length` is the caller's to give, and is kept.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    package static func isFramingField(
        name: String, value: String, bodyLength: Int64?, url: URL?
    ) throws(TransportError) -> Bool {
        if name.equalsIgnoringASCIICase("Transfer-Encoding") {
            throw TransportError(
                .invalidRequest, url: url,
                message: "The request sets Transfer-Encoding; the transport frames the body itself. Not sent.")
        }
        // The URL names the server; a `Host` of the caller's would send the request (and its
        // credentials) to another virtual host behind the same front end, over the connection
        // and the pins made for the URL's host, and follow every redirect to another origin.
        // libcurl and corelibs sent it; Apple's URLSession ignores it.
        if name.equalsIgnoringASCIICase("Host") {
            throw TransportError(
                .invalidRequest, url: url,
                message: "The request sets Host; the transport sets it from the URL. Not sent.")
        }
        // libcurl keeps a caller's `Expect: 100-continue`, and on a 417 sends the request again
        // on the same exchange, still with it: a second answer's head was read as trailers of
        // the 417 (its status with the other's body), and a server that kept answering 417 got
        // the body a hundred times. The transports never wait for a 100 (CurlTransport turns
        // libcurl's own `Expect` off); an empty value sends nothing and is left alone.
        if name.equalsIgnoringASCIICase("Expect"), !value.allSatisfy({ $0 == " " || $0 == "\t" }) {
            throw TransportError(
                .invalidRequest, url: url,
                message: "The request sets Expect; the transports never wait for 100 Continue. Not sent.")
        }
        guard name.equalsIgnoringASCIICase("Content-Length") else { return false }
        guard let bodyLength else { return false }
        let digits = value.trimmingCharacters(in: .whitespaces)
        if !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            ContentLength.parse(digits) == bodyLength
        {
            return true
        }
        throw TransportError(
            .invalidRequest, url: url,
            message:
                "The request's Content-Length (\(describeName(value))) does not match its body "
                + "(\(bodyLength) bytes). Not sent.")
    }

    /// Checks one header; the error names the header, never its value.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    public static func validateHeader(name: String, value: String, url: URL?) throws(TransportError) {
        guard isValidHeaderName(name) else {
            throw TransportError(
                .invalidRequest, url: url,
                message: "The header name \(describeName(name)) is not a valid HTTP field name (RFC 9110 token).")
        }
        guard isValidHeaderValue(value) else {
            throw TransportError(
                .invalidRequest, url: url,
                message: "The value of header \(name) contains CR, LF or NUL; the request was not sent.")
        }
    }

    /// Checks `value` and `name`, then sets the header on `request`. Use it instead of
    /// `URLRequest.setValue(_:forHTTPHeaderField:)` for any value a caller or a server
    /// supplies: Foundation would drop an invalid value without a word.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``; `request`
    ///   is then unchanged.
    public static func setHeader(
        _ value: String, named name: String, on request: inout URLRequest
    ) throws(TransportError) {
        try validateHeader(name: name, value: value, url: request.url)
        request.setValue(value, forHTTPHeaderField: name)
    }

    /// The most bytes a request head may take: the method, the URL, and each header field
    /// counted as `name: value` with its line end; 256 KiB, like a response head's default limit
    /// (``ResponseLimits/maxHeaderBytes``).
    ///
    /// Servers refuse far less (nginx: 8 KiB a line and 32 KiB in all, by default). Without the
    /// check the same mistake failed differently on each transport: libcurl refused a 9 MB
    /// header as "out of memory" (reported as ``TransportError/Code/responseTooLarge``, a
    /// response that never came) and a URL above 8 MB as malformed (`.other`), while corelibs
    /// sent whatever it was given.
    public static let maxRequestHeadBytes = 256 << 10

    /// The most header fields a request may carry: 256, like a response head's default limit
    /// (``ResponseLimits/maxHeaderCount``). Apache refuses more than 100 by default. The request
    /// builders check it before setting a field: Foundation's `setValue` compares each name with
    /// every field already set, so 20,000 fields took 10 s to build.
    public static let maxRequestHeaderFields = 256

    /// The bytes a header field takes in a request head: `name: value` and its line end.
    package static func headBytes(name: String, value: String) -> Int {
        name.utf8.count &+ value.utf8.count &+ 4
    }

    /// The bytes `fields` take in a request head (see ``headBytes(name:value:)``).
    package static func headBytes(of fields: [String: String]) -> Int {
        var total = 0
        for (name, value) in fields { total = total &+ headBytes(name: name, value: value) }
        return total
    }

    /// Checks a request head's size: `fieldCount` header fields taking `bytes` bytes in all
    /// (method, URL and fields) against ``maxRequestHeaderFields`` and ``maxRequestHeadBytes``.
    /// The error gives the sizes and the limit, never a value.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    package static func checkHeadSize(fieldCount: Int, bytes: Int, url: URL?) throws(TransportError) {
        if fieldCount > maxRequestHeaderFields {
            throw TransportError(
                .invalidRequest, url: url,
                message:
                    "The request has \(fieldCount) header fields, above the limit of \(maxRequestHeaderFields) "
                    + "(RequestValidator.maxRequestHeaderFields); it was not sent.")
        }
        if bytes > maxRequestHeadBytes {
            throw TransportError(
                .invalidRequest, url: url,
                message:
                    "The request head (method, URL and header fields) takes \(bytes) bytes, above the limit of "
                    + "\(maxRequestHeadBytes) (RequestValidator.maxRequestHeadBytes); it was not sent.")
        }
    }

    /// Checks the size of `fields` alone, before a builder sets them one by one (which costs
    /// time quadratic in their number): see ``checkHeadSize(fieldCount:bytes:url:)``.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    package static func checkFieldsSize(_ fields: [String: String], url: URL?) throws(TransportError) {
        if fields.isEmpty { return }
        try checkHeadSize(fieldCount: fields.count, bytes: headBytes(of: fields), url: url)
    }

    /// Checks the URL scheme and host, the method, every header `request` carries, and the size
    /// of its head (``maxRequestHeadBytes``, ``maxRequestHeaderFields``).
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    public static func validate(_ request: URLRequest) throws(TransportError) {
        guard let url = request.url else {
            throw TransportError(.invalidRequest, url: nil, message: "The request has no URL.")
        }
        let text = url.absoluteString
        try validateURL(url, text: text)
        try validateMethod(request.httpMethod, url: url)
        try validateBody(of: request, method: uppercasedMethod(request.httpMethod), url: url)
        var bytes = text.utf8.count &+ (request.httpMethod?.utf8.count ?? 3) &+ 12
        guard let fields = request.allHTTPHeaderFields else {
            return try checkHeadSize(fieldCount: 0, bytes: bytes, url: url)
        }
        try checkHeadSize(fieldCount: fields.count, bytes: bytes, url: url)
        for (name, value) in fields {
            try validateHeader(name: name, value: value, url: url)
            bytes = bytes &+ headBytes(name: name, value: value)
        }
        try checkHeadSize(fieldCount: fields.count, bytes: bytes, url: url)
    }

    /// `request` with `body` as its body, for an upload: a `GET` or `HEAD` (which carry none, and
    /// which every transport refuses with one) goes as `POST`, as `CurlTransport.upload` sends
    /// it. Every upload that goes through memory uses it, so an upload is the same request
    /// whichever engine or transport sends it.
    package static func upload(_ request: URLRequest, body: Data) -> URLRequest {
        var upload = request
        upload.httpBody = body
        let method = uppercasedMethod(request.httpMethod)
        if method == "GET" || method == "HEAD" { upload.httpMethod = "POST" }
        return upload
    }

    /// Checks that a `GET` or `HEAD` request has no body: `URLSession` refuses one on every
    /// platform (corelibs with "GET method must not have a body", Apple's with
    /// `NSURLErrorDataLengthExceedsMaximum`), which came out as ``TransportError/Code/other``,
    /// while `CurlTransport` sent it. Now ``TransportError/Code/invalidRequest`` everywhere,
    /// nothing sent; a body belongs on a `POST` (or `QUERY`, `SEARCH`, any other method).
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    package static func validateBody(of request: URLRequest, method: String, url: URL?) throws(TransportError) {
        // The method first: the body's getters cost more on Linux, and only GET and HEAD matter.
        guard method == "GET" || method == "HEAD",
            !(request.httpBody?.isEmpty ?? true) || request.httpBodyStream != nil
        else { return }
        throw TransportError(
            .invalidRequest, url: url,
            message:
                "A \(method) request with a body: URLSession refuses it on every platform; send it with another method. Not sent."
        )
    }

    /// Checks that `url` is an `http` or `https` URL with a host: the only URLs ever sent, first
    /// or after a redirect.
    ///
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest``.
    public static func validateURL(_ url: URL) throws(TransportError) {
        try validateURL(url, text: url.absoluteString)
    }

    /// ``validateURL(_:)`` for a caller that has `url.absoluteString` (`text`) already.
    package static func validateURL(_ url: URL, text: String) throws(TransportError) {
        // The common case on bytes: `URL.scheme` and `URL.host` cost more on Linux than building
        // the request, and this runs for every hop.
        if isHTTPURLWithHost(text) { return }
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw TransportError(
                .invalidRequest, url: url,
                message:
                    "Only http and https URLs can be sent, not \(scheme.map { "\($0):" } ?? "a URL without a scheme").")
        }
        guard let host = url.host, !host.isEmpty else {
            throw TransportError(.invalidRequest, url: url, message: "The URL has no host.")
        }
        // libcurl refuses such a URL as malformed (`.other`); corelibs as a bad URL.
        if let port = url.port, !(1...65_535).contains(port) {
            throw TransportError(
                .invalidRequest, url: url, message: "The URL's port \(port) is not between 1 and 65535.")
        }
    }

    /// Whether `text` starts `http://` or `https://` (any case) and names a host.
    static func isHTTPURLWithHost(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var index = 0
            for expected in "http".utf8 {
                guard index < bytes.count, bytes[index] | 0x20 == expected else { return false }
                index += 1
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "s") { index += 1 }
            for expected in "://".utf8 {
                guard index < bytes.count, bytes[index] == expected else { return false }
                index += 1
            }
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"),
                bytes[end] != UInt8(ascii: "#")
            {
                end += 1
            }
            // A port is 1–65535: anything else takes the slow path, which says so.
            var digits = end
            while digits > index, (0x30...0x39).contains(bytes[digits - 1]) { digits -= 1 }
            if digits < end, digits > index, bytes[digits - 1] == UInt8(ascii: ":") {
                guard end - digits <= 5 else { return false }
                var port = 0
                for position in digits..<end { port = port * 10 + Int(bytes[position] - 0x30) }
                guard (1...65_535).contains(port) else { return false }
            }
            return EndpointRequestBuilder.hasHost(bytes, authority: index..<end)
        }
    }

    /// `tchar` of RFC 9110 §5.6.2.
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A header name as it can be shown: control characters escaped, at most 64 characters.
    static func describeName(_ name: String) -> String {
        var shown = ""
        for scalar in name.unicodeScalars.prefix(64) {
            switch scalar {
            case "\r": shown += "\\r"
            case "\n": shown += "\\n"
            case "\0": shown += "\\0"
            default:
                shown +=
                    scalar.value < 0x20 || scalar.value == 0x7F
                    ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }
        }
        if name.unicodeScalars.count > 64 { shown += "…" }
        return "\"\(shown)\""
    }
}
