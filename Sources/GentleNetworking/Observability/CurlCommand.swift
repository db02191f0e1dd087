import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `curl` command line that sends the same request as a `URLRequest`: its method, URL, headers
/// and body, for pasting into a terminal when a request fails.
///
/// Secrets are redacted by default, as in the logs: the values of `Authorization` (its scheme
/// is kept: `Bearer <redacted>`), `Cookie`, API-key and token headers, sensitive query values,
/// user info in the URL, and sensitive JSON or form fields of the body. A redacted command
/// still runs, with `<redacted>` sent in their place. Pass
/// ``SecretHandling/includeSecretsInPlainText`` to get the credentials themselves, and never
/// log that.
///
/// Every argument is quoted for POSIX shells (`sh`, `dash`, `bash`, `zsh`), in single quotes, so
/// nothing a server or a caller put in a URL, header or body can end the command or start
/// another when it is pasted. Text with control characters never appears raw: a body that has
/// any, or is not UTF-8 text, is piped in with `printf '%b' '…' | curl … --data-binary @-`, every
/// such byte written as an octal escape, so the bytes sent are exactly the body's; other text
/// goes in `--data-raw` (a text starting with `@` is sent, never read as a file to upload); any
/// other argument with one is written `"$(printf '%b' '…')"`. What curl adds on its own is undone
/// where it would change the request: a body without `Content-Type` gets `-H 'Content-Type:'`
/// (curl would send `application/x-www-form-urlencoded`), and the URL is passed with
/// `--globoff` so `[]{}` are not patterns.
public struct CurlCommand: Sendable, CustomStringConvertible {
    /// Whether credentials appear in the command.
    public enum SecretHandling: Sendable, Equatable {
        /// Credentials become `<redacted>` (the default).
        case redact
        /// Credentials appear as they are. The command is then a secret itself: do not log it,
        /// attach it to a bug report or share it.
        case includeSecretsInPlainText
    }

    /// The body sizes shown: a larger body is left out, with a comment saying so. 1 MiB.
    public static let maxShownBodyBytes = 1 << 20

    /// The largest text body given as `--data-raw`; a larger one is piped in with `printf`: 64 KiB,
    /// well under Linux's 128 KiB limit on one argument of a program.
    static let maxInlineBodyBytes = 64 * 1024

    /// The arguments after `curl`, unquoted, in order. A body piped in (see
    /// ``standardInput``) is the argument `@-`.
    public let arguments: [String]
    /// The body, when the command pipes it into curl's standard input (it is not UTF-8 text,
    /// or holds control characters); `nil` otherwise.
    public let standardInput: Data?
    /// A note appended as a shell comment, such as a body that is not shown.
    public let note: String?

    /// Describes `request`.
    ///
    /// - Parameters:
    ///   - request: The request. A request without a URL gives a command with no URL.
    ///   - secrets: ``SecretHandling/redact`` by default.
    ///   - alsoRedacting: More header names whose values are credentials (an auth service's own
    ///     header, such as `X-Session`); compared without regard to case.
    public init(_ request: URLRequest, secrets: SecretHandling = .redact, alsoRedacting: [String] = []) {
        let redact = secrets == .redact
        // As in the log records: credentials by name, and their values wherever they recur (a
        // token echoed in a body field, the auth service's own header).
        let secretValues = redact ? Redactor.credentialValues(of: request, alsoHeaders: alsoRedacting) : []
        var arguments: [String] = []
        var note: String?
        var standardInput: Data?
        let method = (request.httpMethod ?? "GET").uppercased()
        let body = request.httpBody ?? Data()
        let hasBody = !body.isEmpty || request.httpBodyStream != nil
        // `--head` refuses a body ("You can only select one HTTP request method"): a HEAD with
        // one is `-X HEAD`.
        if method == "HEAD", !hasBody {
            arguments.append("--head")
        } else if method != "GET" || hasBody {
            arguments += ["-X", method]
        }
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
        var invalidFields = 0
        for (name, value) in headers {
            // A field no transport sends (a name that is no token, a value with CR, LF or NUL:
            // `RequestValidator`) is left out, with a note: `-H '@file: v'` made curl read
            // headers from a file named `file: v`.
            guard RequestValidator.isValidHeaderName(name), RequestValidator.isValidHeaderValue(value) else {
                invalidFields += 1
                continue
            }
            // curl counts the body it sends, which redaction changes (or leaves out); a caller's
            // length would then frame a different body (the rest read as a next request).
            if name.equalsIgnoringASCIICase("content-length") { continue }
            let shown =
                redact
                ? Redactor.scrub(
                    Redactor.headerValue(name: name, value: value, alsoRedacting: alsoRedacting), secrets: secretValues)
                : value
            // `Name:` with no value would tell curl to drop the header (blanks count as none);
            // `Name;` sends it empty, which is what a value of blanks is (RFC 9110 §5.5).
            let blank = shown.allSatisfy { $0 == " " || $0 == "\t" }
            arguments += ["-H", blank ? "\(name);" : "\(name): \(shown)"]
        }
        // A `Content-Type` left out above counts as none: curl would add its form type.
        let sentContentType = headers.contains {
            $0.key.lowercased() == "content-type" && RequestValidator.isValidHeaderValue($0.value)
        }
        if hasBody, !sentContentType {
            arguments += ["-H", "Content-Type:"]
        }
        if invalidFields > 0 {
            // No name or value is quoted: what makes them invalid may be what a log must not show.
            note = "\(invalidFields) header field(s) left out: not valid HTTP (no transport sends this request)"
        }
        func addNote(_ text: String) { note = note.map { "\($0); \(text)" } ?? text }
        if request.httpBodyStream != nil {
            addNote("the body is a stream and is not shown")
        } else if body.count > Self.maxShownBodyBytes {
            addNote("the body (\(body.count) bytes) is not shown")
        } else if redact, body.count > Redactor.maxScannedBodyBytes {
            // Past what the redactor parses, its fields could not be redacted by name.
            addNote(
                "the body (\(body.count) bytes) is not shown: too large to redact (.includeSecretsInPlainText shows it)"
            )
        } else if !body.isEmpty {
            let contentType = request.value(forHTTPHeaderField: "Content-Type")?.lowercased() ?? ""
            let shown = Self.shownBody(body, contentType: contentType, redact: redact, secrets: secretValues)
            // A text past ``maxInlineBodyBytes`` goes through `printf` (a shell built-in) too:
            // Linux refuses to start a program with one argument over 128 KiB, so curl with such
            // a `--data-raw` never ran ("Argument list too long").
            if shown.count <= Self.maxInlineBodyBytes, let text = String(validating: shown, as: UTF8.self),
                !Self.hasControlCharacters(text)
            {
                // `--data-raw`, not `--data-binary`: both send the text as it is, but the latter
                // reads a text starting with "@" as a file name (`@/etc/passwd` would upload it).
                arguments += ["--data-raw", text]
            } else {
                arguments += ["--data-binary", "@-"]
                standardInput = shown
            }
        }
        arguments.append("--globoff")
        if let url = request.url {
            // `--url`, never bare: a URL text starting with `-` would be read as an option.
            arguments += [
                "--url", redact ? Redactor.scrub(Redactor.url(url), secrets: secretValues) : url.absoluteString,
            ]
        }
        self.arguments = arguments
        self.note = note
        self.standardInput = standardInput
    }

    /// The command on one line: `curl` and the quoted arguments (after `printf … |` when the
    /// body is piped in), then the note as a comment.
    public var description: String {
        var line = (["curl"] + arguments.map(Self.quoted)).joined(separator: " ")
        if let standardInput {
            line = "printf '%b' '" + Self.printfEscaped(standardInput) + "' | " + line
        }
        guard let note else { return line }
        return line + "  # " + note.filter { !$0.isNewline && !Self.hasControlCharacters(String($0)) }
    }

    /// The body as shown: as it is, or with sensitive JSON or form fields redacted and the
    /// request's credential values scrubbed from text.
    ///
    /// JSON is recognised by its bytes, whatever the `Content-Type` says (as the log records do);
    /// a form by its type or its look (`name=value&…`, no space). A body that is not UTF-8 is
    /// redacted byte for byte: read as Latin-1 (one character per byte), redacted, written back,
    /// so its other bytes go out as they were.
    private static func shownBody(_ body: Data, contentType: String, redact: Bool, secrets: [String]) -> Data {
        guard redact else { return body }
        if body.count <= Redactor.maxScannedBodyBytes,
            let object = try? JSONSerialization.jsonObject(with: body, options: []),
            let data = try? JSONSerialization.data(withJSONObject: Redactor.redactJSON(object), options: [.sortedKeys])
        {
            // Sent as the caller wrote it when no field was redacted: re-serialized, its keys are
            // sorted, its slashes escaped and its numbers normalized (a signed body would no
            // longer match its signature).
            if let unchanged = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
                unchanged == data
            {
                return scrubbed(body, secrets: secrets)
            }
            return scrubbed(data, secrets: secrets)
        }
        // JSON that does not parse (NDJSON, a trailing comma, one Latin-1 byte) still has its
        // `"name":` fields redacted, byte for byte.
        let body = Data(Redactor.redactedJSONBytes([UInt8](body)[...], outputLimit: Int.max))
        guard let text = String(validating: body, as: UTF8.self) else {
            // Never the body unredacted: a conversion that fails gives the placeholder instead.
            guard let bytes = String(data: body, encoding: .isoLatin1) else { return Data(Redactor.placeholder.utf8) }
            let latin1Secrets = secrets.compactMap { String(data: Data($0.utf8), encoding: .isoLatin1) }
            let redacted =
                isForm(bytes, contentType: contentType)
                ? Redactor.redactForm(bytes) : Redactor.looksLikeMarkup(bytes) ? Redactor.redactMarkup(bytes) : bytes
            return Redactor.scrub(redacted, secrets: latin1Secrets).data(using: .isoLatin1)
                ?? Data(Redactor.placeholder.utf8)
        }
        let redacted =
            isForm(text, contentType: contentType)
            ? Redactor.redactForm(text) : Redactor.looksLikeMarkup(text) ? Redactor.redactMarkup(text) : text
        return Data(Redactor.scrub(redacted, secrets: secrets).utf8)
    }

    /// `data` (UTF-8) with the credential values replaced.
    private static func scrubbed(_ data: Data, secrets: [String]) -> Data {
        guard let text = String(validating: data, as: UTF8.self) else { return data }
        return Data(Redactor.scrub(text, secrets: secrets).utf8)
    }

    /// Whether `text` is form-encoded: by its type, or by its look, as the log records judge it.
    private static func isForm(_ text: String, contentType: String) -> Bool {
        contentType.contains("x-www-form-urlencoded")
            || (Redactor.looksLikeForm(text, bytes: text.utf8) && !Redactor.looksLikeMarkup(text))
    }

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// `argument` quoted for a POSIX shell: bare when it is made of safe characters, else in
    /// single quotes, or as `"$(printf '%b' '…')"` when it holds a control character.
    static func quoted(_ argument: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%")
        // Bare only when no shell reads it otherwise: zsh expands a word starting with `=`
        // (`=ls` is the path of `ls`).
        if !argument.isEmpty, argument.first != "=", argument.allSatisfy({ safe.contains($0) }) { return argument }
        if hasControlCharacters(argument) {
            return "\"$(printf '%b' '" + printfEscaped(Data(argument.utf8)) + "')\""
        }
        return "'" + argument.replacingOccurrences(of: "'", with: #"'\''"#, options: .literal) + "'"
    }

    /// `bytes` for `printf '%b'` inside single quotes: printable ASCII as it is, every other
    /// byte (and `\`, `'` and `!`) as `\0` and three octal digits, so any byte, NUL included,
    /// comes out as it went in. `!` too: the form sits in double quotes, where an interactive
    /// shell with history expansion may read `!x` as an earlier command line.
    static func printfEscaped(_ bytes: Data) -> String {
        var result = ""
        result.reserveCapacity(bytes.count)
        for byte in bytes {
            if (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "'"),
                byte != UInt8(ascii: "!")
            {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "\\0" + String(byte, radix: 8).leftPadded(to: 3)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension URLRequest {
    /// A `curl` command that sends this request, with credentials redacted unless asked for:
    /// see ``CurlCommand``.
    ///
    /// - Parameters:
    ///   - secrets: ``CurlCommand/SecretHandling/redact`` by default.
    ///   - alsoRedacting: Header names whose values are secrets besides the usual ones, such
    ///     as an auth service's own header (`X-Access`); none by default, so pass
    ///     ``AuthServiceProtocol/headerField`` when the service uses a header of its own.
    public func curlCommand(secrets: CurlCommand.SecretHandling = .redact, alsoRedacting: [String] = []) -> String {
        CurlCommand(self, secrets: secrets, alsoRedacting: alsoRedacting).description
    }
}
