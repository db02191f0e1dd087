import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Secrets that went through to cURL commands, log records and HAR files (review, tenth pass):
/// passwords in multipart and XML bodies, credential names not known as such, secrets after a
/// `;`, URLs in headers of other names, and key headers by their form. Each test failed before
/// its fix. Every secret holds `SEKRIT`, so one grep finds any of them.
@Suite("Redaction: multipart, XML, names, separators and URL-valued headers")
struct RedactionGapTests {
    private static func post(_ url: String, body: String, contentType: String) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        return request
    }

    /// What a log record, a HAR file and a cURL command show of `request` answered with
    /// `headers` and `responseBody`, as one text.
    private static func observed(
        _ request: URLRequest, headers: [String: String] = [:], responseBody: String = "{}"
    ) throws -> String {
        let logger = RecordingLogger()
        let har = HARRecorder()
        let url = try #require(request.url)
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
        for observer in [logger, har] as [any NetworkLogger] {
            let session = try #require(NetworkLogSession(logger: observer, request: request, alsoHeaders: []))
            session.response(response, body: Data(responseBody.utf8))
        }
        let records = logger.records.map { record in
            "\(record.url)|\(record.headers.sorted { $0.key < $1.key })|\(record.bodyExcerpt ?? "")"
        }
        let harText = String(decoding: har.harData(), as: UTF8.self)
        return (records + [harText, CurlCommand(request).description]).joined(separator: "\n")
    }

    @Test("A multipart part named password, token or otp: its content is redacted, the other parts kept")
    func multipart() throws {
        let boundary = "gn-boundary"
        let body = [
            "--\(boundary)", #"Content-Disposition: form-data; name="user""#, "", "ada",
            "--\(boundary)", #"Content-Disposition: form-data; name="password""#, "", "hunter2-SEKRIT",
            "--\(boundary)", #"Content-Disposition: form-data; name="otp""#, "", "123-SEKRIT",
            "--\(boundary)--", "",
        ].joined(separator: "\r\n")
        let request = try Self.post(
            "https://api.example.com/login", body: body, contentType: "multipart/form-data; boundary=\(boundary)")
        let text = try Self.observed(request)
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("ada"))
    }

    @Test(
        "A multipart part named by an unquoted token, or after a preamble: its content is redacted, the rest kept",
        arguments: [
            (preamble: "", name: "password"), (preamble: "", name: "PassWord"),
            (preamble: "This is a preamble, ignored by servers.\r\n", name: "\"password\""),
            (preamble: "preamble\r\n\r\n", name: "token"),
        ])
    func multipartTokenNameAndPreamble(preamble: String, name: String) throws {
        let boundary = "gn-boundary"
        let body =
            preamble
            + [
                "--\(boundary)", #"Content-Disposition: form-data; name="user""#, "", "ada",
                "--\(boundary)", "Content-Disposition: form-data; name=\(name)", "", "hunter2-SEKRIT",
                "--\(boundary)", "Content-Disposition: form-data; name=note; filename=a.txt", "", "kept-note",
                "--\(boundary)--", "",
            ].joined(separator: "\r\n")
        let request = try Self.post(
            "https://api.example.com/login", body: body, contentType: "multipart/form-data; boundary=\(boundary)")
        let text = try Self.observed(request)
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("ada") && text.contains("kept-note"), "\(text)")
        // What is no multipart body is redacted as it was: a line starting with `--` that no
        // part's header follows is no boundary, so this stays a form (taken for a multipart
        // body, its `password=` field showed).
        let plain = try Self.post(
            "https://api.example.com/notes",
            body: "intro\r\n--not a boundary\r\nX-Note: 1\r\n\r\na=1&password=hunter2-SEKRIT&b=kept-text",
            contentType: "text/plain")
        let plainText = try Self.observed(plain)
        #expect(!plainText.contains("SEKRIT") && plainText.contains("kept-text"), "\(plainText)")
    }

    @Test("Multipart: an unquoted name= inside a part's content is content; a preamble is still redacted as a form")
    func multipartContentAndPreamble() throws {
        let boundary = "gn-boundary"
        let body =
            "token=pre-SEKRIT\r\n"
            + [
                "--\(boundary)", #"Content-Disposition: form-data; name="config"; filename="app.ini""#, "",
                "name=session_cache", "--\(boundary)", #"Content-Disposition: form-data; name="title""#, "",
                "kept-title", "--\(boundary)--", "",
            ].joined(separator: "\r\n")
        let request = try Self.post(
            "https://api.example.com/upload", body: body, contentType: "multipart/form-data; boundary=\(boundary)")
        let text = try Self.observed(request)
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("kept-title") && text.contains("session_cache"), "\(text)")
        // The redacted preamble keeps its line end: the first boundary still starts a line.
        #expect(Redactor.redactMarkup(body).hasPrefix("token=\(Redactor.placeholder)\r\n--\(boundary)\r\n"))
    }

    @Test("XML: an element or attribute named like a secret has its value redacted, with any namespace prefix")
    func xml() throws {
        let body =
            #"<login user="ada" password="attr-SEKRIT"><ns:Password>el-SEKRIT</ns:Password><token>"#
            + #"t-SEKRIT</token><note>kept</note></login>"#
        let request = try Self.post("https://api.example.com/login", body: body, contentType: "application/xml")
        let text = try Self.observed(request, responseBody: "<session><sessionId>s-SEKRIT</sessionId></session>")
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("kept") && text.contains("ada"))
    }

    @Test("XML: an attribute value in single quotes, or with blanks around its '=', is redacted too")
    func xmlAttributeForms() throws {
        let body =
            #"<login user='ada' password = "spaced-SEKRIT"><device token='single-SEKRIT'/>"#
            + "<key secret\n=\n'newline-SEKRIT' note='kept'/></login>"
        let request = try Self.post("https://api.example.com/login", body: body, contentType: "application/xml")
        let text = try Self.observed(request, responseBody: #"<session token = 'response-SEKRIT' user="bo"/>"#)
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("ada") && text.contains("kept") && text.contains("bo"), "\(text)")
    }

    @Test(
        "A query nested in a query value (a raw '?'), or a URL quoted in text with parentheses: its secrets are redacted"
    )
    func nestedQueriesAndParentheses() throws {
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/items")))
        let text = try Self.observed(
            request, headers: ["Location": "https://sso.example/login?next=/cb?access_token=nested-SEKRIT&lang=en"])
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("next=/cb?access_token=") && text.contains("lang=en"), "\(text)")
        #expect(Redactor.redactForm("next=/cb?x=1;password=a?b&y=2") == "next=/cb?x=1;password=<redacted>&y=2")
        let error = Redactor.redactingURLs(
            in: "refresh failed (https://auth.example/token?scope=(openid)&client_secret=paren-SEKRIT) at 12:00")
        #expect(!error.contains("SEKRIT") && error.hasPrefix("refresh failed (https://auth.example/token?"), "\(error)")
    }

    @Test(
        "A percent-encoded query nested in a query value, and a relative reference with '://' later in its path: secrets redacted"
    )
    func encodedNestedQueriesAndLateSchemes() throws {
        let request = URLRequest(
            url: try #require(
                URL(string: "https://api.example.com/items?next=%2Fcb%3Fa%3D1%26api_key%3Dq-SEKRIT&lang=en")))
        let text = try Self.observed(
            request,
            headers: [
                "Location": "https://sso.example/login?next=%2fcb%3fstate%3dkept%3baccess_token%3Dloc-SEKRIT&x=2",
                "Content-Location": "/app;jsessionid=rel-SEKRIT/to/https://other.example/x",
            ])
        #expect(!text.contains("SEKRIT"), "\(text)")
        // The encoding is kept, and what is no secret stays.
        #expect(text.contains("next=%2Fcb%3Fa%3D1%26api_key%3D<redacted>&lang=en"), "\(text)")
        #expect(text.contains("state%3dkept") && text.contains("/to/https://other.example/x"), "\(text)")
        // An encoded byte that is no separator (`%2F`, `%3`, `%`) does not split a value.
        #expect(Redactor.redactForm("a=%2Ftoken%3&b=%") == "a=%2Ftoken%3&b=%")
        // A disk ETag store does not write such a URL into its metadata either (it checked
        // `&`-separated names only); an ordinary one is kept.
        for hidden in [
            "https://h.example/items?next=%2Fcb%3Faccess_token%3Dx", "https://h.example/items?a=1;api_key=x",
            "https://h.example/app;jsessionid=x/items", "https://h.example/items?next=/cb?token=x",
        ] {
            #expect(DiskETagStore.storableURL(URL(string: hidden)) == nil, "\(hidden)")
        }
        #expect(DiskETagStore.storableURL(URL(string: "https://h.example/items?page=2;sort=asc")) != nil)
    }

    @Test("Names that hold credentials: code (in a query or a form), refresh/access (JWT pair), pin, otp, passcode")
    func names() throws {
        let form = "grant_type=authorization_code&code=authcode-SEKRIT&code_challenge_method=S256"
        var request = try Self.post(
            "https://api.example.com/token?pin=1234-SEKRIT", body: form,
            contentType: "application/x-www-form-urlencoded")
        request.setValue("text/plain", forHTTPHeaderField: "Accept")
        let text = try Self.observed(
            request, headers: ["Location": "myapp://cb?code=loc-SEKRIT&state=xyz"],
            responseBody:
                #"{"refresh":"eyJ-r-SEKRIT","access":"eyJ-a-SEKRIT","passcode":"p-SEKRIT","code":404,"device_code":"d-SEKRIT","auth_code":"c-SEKRIT","sms_code":"s-SEKRIT","hmac":"h-SEKRIT"}"#
        )
        #expect(!text.contains("SEKRIT"), "\(text)")
        // `code` in JSON is an error's, kept; the state of an OAuth redirect is not a secret.
        #expect(text.contains("404") && text.contains("state=xyz"))
    }

    @Test(
        "A mark that joins an `&`, `;`, `=` or space into one character (U+0600 before, U+0301 or ZWJ after) hides no form field or cookie"
    )
    func joinedSeparators() throws {
        func hasSecret(_ text: String) -> Bool { Data(text.utf8).range(of: Data("SEKRIT".utf8)) != nil }
        // As characters, `hi` + U+0600 + `&` is `h`, `i`, `\u{600}&`: the form was one pair
        // named `note`, and the password after it was shown.
        for body in [
            "note=hi\u{600}&password=f1-SEKRIT", "note=x\u{6DD}&access_token=f2-SEKRIT",
            "a=1&\u{200D}password=f3-SEKRIT", "a=1&\u{301}client_secret=f4-SEKRIT",
        ] {
            let request = try Self.post(
                "https://api.example.com/login", body: body, contentType: "application/x-www-form-urlencoded")
            let text = try Self.observed(request, responseBody: "echo: " + body)
            #expect(!hasSecret(text), "\(body.unicodeScalars.map { $0.escaped(asASCII: true) }.joined()): \(text)")
            #expect(text.contains("note=") || text.contains("a=1"))
        }
        // A cookie after a joined `;`: its value, echoed alone by a server, is scrubbed too.
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/me")))
        request.setValue("theme=dark\u{600}; session=c-SEKRIT-0123456789", forHTTPHeaderField: "Cookie")
        let text = try Self.observed(request, responseBody: #"{"debug":"c-SEKRIT-0123456789"}"#)
        #expect(!hasSecret(text), "\(text)")
        // An `Authorization` whose scheme is followed by a mark: the scheme is shown, the whole
        // credential hidden (the space joined to the mark was skipped: `a` was shown).
        let shown = Redactor.headerValue(name: "Authorization", value: "Basic\u{600} a b-SEKRIT")
        #expect(shown == "Basic\u{600} <redacted>", "\(shown)")
    }

    @Test("A secret after a ';' separator, in a query, a form or a path parameter, is redacted")
    func semicolons() throws {
        let request = try Self.post(
            "https://api.example.com/app;jsessionid=js-SEKRIT/items?a=1;api_key=q-SEKRIT",
            body: "a=1;password=f-SEKRIT", contentType: "application/x-www-form-urlencoded")
        let text = try Self.observed(request)
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("/items"))
    }

    @Test(
        "A path parameter named like a secret in a URL a server hands back (headers, a JSON value, an error text) is redacted"
    )
    func pathParametersInServerURLs() throws {
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/items")))
        let text = try Self.observed(
            request,
            headers: [
                "Location": "https://app.example/app;jsessionid=loc-SEKRIT",
                "Content-Location": "/app;jsessionid=rel-SEKRIT/items",
                "Link": "<https://h.example/a;jsessionid=link-SEKRIT>; rel=next",
                "Refresh": "0; url=/a;jsessionid=refresh-SEKRIT",
                "X-Next": "https://h.example/b;token=next-SEKRIT/c",
            ],
            responseBody: #"{"next":"https://h.example/a;jsessionid=body-SEKRIT","page":"/p;x=1"}"#)
        #expect(!text.contains("SEKRIT"), "\(text)")
        // What is no secret stays: the path around the parameter, the link relation, the delay.
        #expect(text.contains("/items") && text.contains("rel=next") && text.contains("/p;x=1"), "\(text)")
        // `Refresh` without `url=` (HTML allows it): the URL redacted, an ordinary one shown.
        let refresh = Redactor.headers(["Refresh": "5; https://h.example/a;jsessionid=bare-SEKRIT"])["Refresh"]
        #expect(refresh?.contains("SEKRIT") == false && refresh?.hasPrefix("5; https://h.example/a;") == true)
        #expect(
            Redactor.headers(["Refresh": "5; https://example.com/next"])["Refresh"] == "5; https://example.com/next")
        let error = Redactor.redactingURLs(
            in: "Could not reach https://h.example/app;jsessionid=err-SEKRIT/x; retrying")
        #expect(!error.contains("SEKRIT") && error.hasSuffix("/x; retrying"), "\(error)")
        #expect(Redactor.redactingURLs(in: "see https://h.example/a;b, then") == "see https://h.example/a;b, then")
    }

    @Test("A URL in a header of any name has its query secrets redacted")
    func urlValuedHeaders() throws {
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/items")))
        let text = try Self.observed(
            request,
            headers: [
                "X-Next": "https://api.example.com/items?page=2&access_token=n-SEKRIT",
                "X-Redirect-To": "/cb?password=r-SEKRIT",
            ])
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("page=2"))
    }

    @Test(
        "Key and auth headers by their form: X-Master-Key, X-Client-Key, X-Auth, X-Authentication; not Idempotency-Key")
    func keyHeaders() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/items")))
        for name in [
            "X-Master-Key", "X-Parse-Master-Key", "X-Mashape-Key", "X-Client-Key", "X-Auth", "X-Authentication",
        ] {
            request.setValue("\(name)-SEKRIT", forHTTPHeaderField: name)
        }
        request.setValue("idem-42", forHTTPHeaderField: "Idempotency-Key")
        // An echo endpoint quotes them back under their header names, which are not secret
        // names in a body: the values are scrubbed as the request's credentials.
        let echo = #"{"headers":{"X-Master-Key":"X-Master-Key-SEKRIT","X-Auth":"X-Auth-SEKRIT"},"idem":"idem-42"}"#
        let text = try Self.observed(request, headers: ["X-Echo": "X-Client-Key-SEKRIT"], responseBody: echo)
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("idem-42"))
    }

    @Test(
        "Review of the first fixes: a ';' inside a secret, a '--' line inside a part, an attribute of a secret element")
    func reviewedLeaks() throws {
        let boundary = "gn-b"
        let body = [
            "--\(boundary)", #"Content-Disposition: form-data; name="private_key""#, "",
            "-----BEGIN CERTIFICATE-----", "c", "-----END CERTIFICATE-----", "k-SEKRIT",
            "--\(boundary)", #"Content-Disposition: form-data; name="user""#, "", "ada", "--\(boundary)--", "",
        ].joined(separator: "\r\n")
        let request = try Self.post(
            "https://api.example.com/up?password=ab;cd-SEKRIT&page=2", body: body,
            contentType: "multipart/form-data; boundary=\(boundary)")
        let text = try Self.observed(
            request, headers: ["X-Session-Url": "https://h.example/s/u-SEKRIT"],
            responseBody: #"<session token="attr-SEKRIT" id="7">s-SEKRIT</session><note>kept</note>"#)
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(text.contains("ada") && text.contains("page=2") && text.contains("kept"))
    }

    @Test("Not secrets: ?refresh=true and ?access=read scrub nothing else, S3's <Key>, an HTML name= attribute")
    func notOverRedacted() throws {
        let request = URLRequest(
            url: try #require(URL(string: "https://api.example.com/feed?refresh=true&access=read")))
        let text = try Self.observed(
            request,
            responseBody:
                #"<html><meta name="csrf-token" content="c"><p>already true</p><Key>photos/1.jpg</Key><b>tail</b></html>"#
        )
        #expect(text.contains("already true") && text.contains("photos/1.jpg") && text.contains("tail"), "\(text)")
        #expect(DiskETagStore.storableURL(request.url) != nil)
    }

    @Test(
        "Markup redaction is linear: eight times the unclosed sensitive tags and names take about eight times as long")
    func markupIsLinear() {
        func hostile(_ count: Int) -> String {
            String(repeating: "<password", count: count) + String(repeating: "name=\"token\"", count: count / 2)
        }
        let small = hostile(20_000)
        let large = hostile(160_000)
        /// One redaction of `text`, in seconds.
        func seconds(_ text: String) -> Double {
            let started = DispatchTime.now()
            let redacted = Redactor.redactMarkup(text)
            #expect(redacted.hasSuffix(Redactor.placeholder))
            return Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        }
        // The shortest of three of each, taken in turn, so a stall of a starved run falls on
        // both sizes alike and one stall does not decide (a CI run under load once measured
        // 9x for 4x the input with a bound of 8x).
        var quarter = Double.infinity
        var whole = Double.infinity
        for _ in 0..<3 {
            quarter = min(quarter, seconds(small))
            whole = min(whole, seconds(large))
        }
        // Linear: about 8x; quadratic: about 64x. An absolute bound cannot tell them apart on a
        // machine whose speed varies 100-fold between a quiet run and a starved one.
        #expect(whole < quarter * 24 + 0.05, "20,000 tags: \(quarter) s, 160,000: \(whole) s")
        #expect(whole < 120, "\(whole) s")
    }
}
