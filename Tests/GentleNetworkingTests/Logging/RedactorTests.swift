import Foundation
import Testing

@testable import GentleNetworking

@Suite("Redaction of credentials")
struct RedactorTests {
    @Test("Credential headers keep their scheme but lose their value")
    func headers() {
        let redacted = Redactor.headers([
            "Authorization": "Bearer abc", "Proxy-Authorization": "Basic xyz", "Cookie": "a=b",
            "X-API-Key": "k", "Accept": "application/json",
        ])
        #expect(redacted["Authorization"] == "Bearer <redacted>")
        #expect(redacted["Proxy-Authorization"] == "Basic <redacted>")
        #expect(redacted["Cookie"] == "<redacted>")
        #expect(redacted["X-API-Key"] == "<redacted>")
        #expect(redacted["Accept"] == "application/json")
    }

    @Test("Sensitive query values and user info are removed from URLs")
    func urls() {
        let text = Redactor.url(URL(string: "https://user:pw@h.example/p?access_token=abc&page=2"))
        #expect(text == "https://h.example/p?access_token=<redacted>&page=2")
    }

    @Test("The mark scan finds each mark anywhere (first byte, last byte, after non-ASCII text) and nothing else")
    func markScan() {
        let marks = Redactor.userInfoQueryOrFragmentMarks
        for text in ["@x", "x?", "a#b", "é/ü?q", "https://h.example/p?q=1", String(repeating: "a", count: 100) + "#"] {
            #expect(Redactor.containsAny(of: marks, in: text), "\(text)")
        }
        for text in ["", "https://h.example/p", "é/ü", String(repeating: "a", count: 100), "%40%3F%23"] {
            #expect(!Redactor.containsAny(of: marks, in: text), "\(text)")
        }
        #expect(Redactor.containsAny(of: Redactor.queryMark, in: "/p?"))
        #expect(!Redactor.containsAny(of: Redactor.queryMark, in: "/p@#"))
        // A URL with user info but no query or fragment still takes the slow path and loses it.
        #expect(Redactor.url(URL(string: "https://user:pw@h.example/p")) == "https://h.example/p")
    }

    @Test("URL headers (Location, Content-Location, Referer) lose user info, fragments and secret query values")
    func urlHeaders() {
        let redacted = Redactor.headers([
            "Location": "myapp://callback?state=s1&access_token=T0K#id_token=IDT",
            "location": "/next?session=S3SS&page=2", "Content-Location": "https://u:pw-123@h.example/x",
            "Referer": "https://h.example/p?api_key=K3Y", "X-Other": "plain", "Location-Hint": "?token=kept",
        ])
        #expect(redacted["Location"] == "myapp://callback?state=s1&access_token=<redacted>")
        #expect(redacted["location"] == "/next?session=<redacted>&page=2")
        #expect(redacted["Content-Location"] == "https://h.example/x")
        #expect(redacted["Referer"] == "https://h.example/p?api_key=<redacted>")
        #expect(redacted["X-Other"] == "plain")
        #expect(redacted["Location-Hint"] == "?token=kept")  // not a URL header
        #expect(Redactor.headers(["Location": "https://h.example/plain"])["Location"] == "https://h.example/plain")
        #expect(Redactor.headers(["Location": "/a b?c#token=x"])["Location"]?.contains("token") == false)
    }

    @Test(
        "Only Link is read as <references> and only Refresh as `5; url=`: a Location in either shape loses its secrets")
    func urlHeaderShapes() {
        // Read as a Link, the text outside the brackets was shown as it came.
        let bracketed = Redactor.headers(["Location": "myapp://cb#access_token=S3CRET&state=<x>"])["Location"]
        #expect(bracketed?.contains("S3CRET") == false, "\(bracketed ?? "nil")")
        // Read as a Refresh, everything before `url=` was.
        let digits = Redactor.headers(["Location": "2024/cb?session=S3CRET&return_url=/home"])["Location"]
        #expect(digits == "2024/cb?session=<redacted>&return_url=/home")
        // The real shapes still work, each part redacted on its own.
        let link = Redactor.headers([
            "Link": #"<https://h/p?page=2&token=T1>; rel="next", <https://h/p?page=9>; rel="last""#
        ])["Link"]
        #expect(link == #"<https://h/p?page=2&token=<redacted>>; rel="next", <https://h/p?page=9>; rel="last""#)
        #expect(
            Redactor.headers(["Link": "<https://h/p>; anchor=\"?token=T1\""])["Link"] == "<https://h/p><redacted>")
        #expect(
            Redactor.headers(["Refresh": "5; url=https://h/p?session=S1"])["Refresh"]
                == "5; url=https://h/p?session=<redacted>")
        #expect(Redactor.headers(["Refresh": "soon; url=https://h/p?session=S1"])["Refresh"] == "<redacted>")
    }

    @Test("Thousands of secret-named query items are scrubbed in one pass: the URL, the cURL command and the records")
    func manySecrets() async throws {
        // 20,000 items: 80,000 values to scrub (each with its encoded forms). One after the other,
        // that was 80,000 scans of a 600 KB text for each of the URL and the command: 17 s for a
        // quarter as many alone, about sixteen times that here; one pass takes about a second.
        let query = (0..<20_000).map { "session_\($0)=SEKRIT\(String(format: "%06d", $0 * 7919 % 1_000_003))" }
            .joined(separator: "&")
        let url = try #require(URL(string: "https://api.example.com/x?" + query))
        let request = URLRequest(url: url)
        let started = Date()
        let secrets = Redactor.credentialValues(of: request)
        #expect(secrets.count >= 20_000)
        let scrubbed = Redactor.scrub("echo: " + query, secrets: secrets)
        let command = CurlCommand(request).description
        // Loose: the parallel runs stall every test in the process at once, for up to 65 s.
        #expect(Date().timeIntervalSince(started) < 120, "\(Date().timeIntervalSince(started)) s")
        #expect(!scrubbed.contains("SEKRIT"))
        #expect(!command.contains("SEKRIT"))
        // The same result as one secret after the other, on a small case with overlaps.
        let few = ["abcd1234", "1234xyz", "zzzz"]
        let many = few + (0..<20).map { "unused-secret-\($0)" }
        let text = "a abcd1234xyz b 1234xyz c zzzzz d é-abcd1234"
        #expect(Redactor.scrub(text, secrets: many) == Redactor.scrub(text, secrets: few))
        #expect(Redactor.scrub(text, secrets: few) == "a <redacted>xyz b <redacted> c <redacted>z d é-<redacted>")
    }

    @Test("A secret followed by a combining mark is scrubbed (its bytes are gone), with few secrets or many")
    func combiningMarkAfterSecret() {
        // Foundation's default search takes `f` + U+0301 as one character: it found no
        // `tok-abcdef` in `tok-abcdef\u{301}`, though the bytes are there, and kept them.
        func hasBytes(_ text: String, _ secret: String) -> Bool {
            Data(text.utf8).range(of: Data(secret.utf8)) != nil
        }
        let text = #"{"echo":"tok-abcdef\#u{301}","short":"k9\#u{301}"}"#
        let few = ["tok-abcdef"]
        let many = ["tok-abcdef", "k9"] + (0..<20).map { "unused-secret-\($0)" }
        #expect(!hasBytes(Redactor.scrub(text, secrets: few), "tok-abcdef"))
        let scrubbed = Redactor.scrub(text, secrets: many)
        #expect(!hasBytes(scrubbed, "tok-abcdef") && !hasBytes(scrubbed, "k9"), "\(scrubbed)")
    }

    @Test("A combining mark after `://`, `=` or `;` does not hide a URL, a form or a path parameter")
    func combiningMarkAfterDelimiters() {
        func hasSecret(_ text: String) -> Bool { Data(text.utf8).range(of: Data("SEKRIT".utf8)) != nil }
        // As characters, `/` + U+0301 is no `/`, and `=` + U+0301 no `=`.
        #expect(!hasSecret(Redactor.redactingURLs(in: "at https://\u{301}h.example/cb?client_secret=SEKRIT now")))
        let form = "password=\u{301}SEKRIT"
        #expect(Redactor.looksLikeForm(form, bytes: form.utf8))
        #expect(!hasSecret(Redactor.redactForm(form)))
        #expect(!hasSecret(Redactor.redactPathParameters("https://h.example/app;jsessionid=\u{301}SEKRIT/x")))
    }

    @Test("A hostile Refresh, Link or Location of 1 MiB is redacted in linear time, without recursion")
    func urlHeaderBounded() async {
        // `0url=` repeated: every level of the old recursion matched again (20,000 levels for
        // 100 KB; a stack overflow on a 512 KiB thread stack).
        let repeated = String(repeating: "0url=", count: 200_000) + "?token=T"
        let brackets = String(repeating: "<a?b>", count: 200_000)
        let started = Date()
        // A secondary thread's stack (as on Apple's cooperative pool), where the recursion overflowed.
        let shown = await Task.detached {
            ["Refresh", "Location", "Link"].flatMap { name in
                [repeated, brackets].map { Redactor.headers([name: $0])[name] ?? "" }
            }
        }.value
        // Linear: well under a second alone, 18 s once in a loaded parallel run, 127 s under
        // ThreadSanitizer on a 2-core machine (its tests end at a median of 90–130 s after they
        // start); quadratic would be hours, and the recursion crashed the process (signal 11).
        #expect(Date().timeIntervalSince(started) < 400)
        #expect(shown.allSatisfy { !$0.contains("token=T") })
    }

    @Test("JSON and form bodies lose secret fields, at any depth, and are truncated")
    func bodies() {
        let json = Redactor.bodyExcerpt(
            Data(#"{"user":{"password":"p","name":"n"},"list":[{"refresh_token":"r"}]}"#.utf8), limit: 1000)
        #expect(json == #"{"list":[{"refresh_token":"<redacted>"}],"user":{"name":"n","password":"<redacted>"}}"#)
        #expect(Redactor.bodyExcerpt(Data("user=a&password=b".utf8), limit: 100) == "user=a&password=<redacted>")
        // A careless form with a raw space (not `+`) is still a form: the password was logged.
        #expect(
            Redactor.bodyExcerpt(Data("user=a b&password=hunter 2".utf8), limit: 100)
                == "user=a b&password=<redacted>")
        #expect(
            Redactor.bodyExcerpt(Data("note=see you&token=t0k en".utf8), limit: 100) == "note=see you&token=<redacted>")
        #expect(
            Redactor.bodyExcerpt(Data(String(repeating: "x", count: 600).utf8), limit: 10).hasPrefix("xxxxxxxxxx… (600")
        )
        #expect(Redactor.bodyExcerpt(Data([0xFF, 0xFE, 0x00]), limit: 10) == "<3 bytes of binary data>")
    }

    @Test("Secret names are found in any case, as fragments or whole words, and non-ASCII cannot hide one")
    func sensitiveNames() {
        for name in [
            "Authorization", "X-ACCESS-TOKEN", "client_secret", "Api-Key", "APIKEY", "PHPSESSID", "sid", "SID", "Auth",
            "set-cookie", "to\u{212A}en", "é_password", "ID-Token-ü",
            // Found missing in a review: Google's `?key=`, service-account JSON, Cloudflare,
            // Azure API Management and Functions headers, short password names, JWTs.
            "key", "KEY", "private_key", "aws_access_key_id", "X-Auth-Key", "Ocp-Apim-Subscription-Key",
            "x-functions-key", "pwd", "pass", "passphrase", "jwt", "id_jwt",
        ] {
            #expect(Redactor.isSensitiveName(name), "\(name)")
        }
        for name in [
            "inside", "author", "id", "Accept", "Content-Type", "", "é", "tokn", "primary_key", "Idempotency-Key",
            "keys", "passenger", "monkey",
        ] {
            #expect(!Redactor.isSensitiveName(name), "\(name)")
        }
    }

    @Test("Every always-redacted header name is also a sensitive name, in any case")
    func sensitiveHeadersAreSensitiveNames() {
        // credentialValues(of:) relies on it: it asks isSensitiveName alone.
        for name in Redactor.sensitiveHeaders {
            #expect(Redactor.isSensitiveName(name), "\(name)")
            #expect(Redactor.isSensitiveName(name.uppercased()), "\(name)")
        }
    }

    @Test("A request's credential values are found whatever the case of the header names")
    func credentialValuesIgnoreCase() throws {
        var request = URLRequest(url: try #require(URL(string: "https://h.example/p?access_token=qtok999&page=22")))
        request.setValue("Bearer tok1234", forHTTPHeaderField: "AUTHORIZATION")
        request.setValue("key5678", forHTTPHeaderField: "x-My-Tenant")
        request.setValue("a=val123; b=val456", forHTTPHeaderField: "COOKIE")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("plain-value", forHTTPHeaderField: "X-Other")
        let values = Redactor.credentialValues(of: request, alsoHeaders: ["X-MY-TENANT"])
        let found: Set<String> = [
            "Bearer tok1234", "tok1234", "key5678", "a=val123; b=val456", "b=val456", "val123", "val456", "qtok999",
        ]
        // Each also as a server echoes it inside a URL or a form (percent- or form-encoded).
        #expect(
            Set(values)
                == found.union(found.map(PercentEncoding.queryComponent)).union(
                    found.map { PercentEncoding.formComponent($0, spaceAsPlus: true) }))
        // Longest first.
        #expect(values.map(\.count) == values.map(\.count).sorted(by: >))
        #expect(Redactor.credentialValues(of: request).contains("key5678") == false)
        // A key header by its form needs no naming when its value reads as a key; a short or
        // spaced one (`X-Sort-Key: name`) is not scrubbed from every text that holds it.
        request.setValue("mk-90ab12cd34", forHTTPHeaderField: "X-Master-Key")
        request.setValue("name", forHTTPHeaderField: "X-Sort-Key")
        request.setValue("json body of mine", forHTTPHeaderField: "X-Cache-Key")
        request.setValue("true", forHTTPHeaderField: "X-Auth")
        let formed = Redactor.credentialValues(of: request)
        #expect(formed.contains("mk-90ab12cd34"))
        for plain in ["name", "true", "json body of mine", "body", "json"] {
            #expect(!formed.contains(plain), "\(plain) in \(formed)")
        }
        #expect(Redactor.scrub(#"{"name":"Ada","admin":true}"#, secrets: formed) == #"{"name":"Ada","admin":true}"#)
    }

    @Test("Header names that say they hold a credential, and ordinary ones that only look close")
    func credentialNames() {
        let credentials = [
            "PRIVATE-TOKEN", "X-Auth-Key", "X-AUTH", "x-auth-email", "X-Master-Key", "X-Parse-Master-Key",
            "X-RapidAPI-Key", "X-Mashape-Key", "X-Client-Secret", "X-Vault-Token", "X-Api-Key", "Api-Key", "apikey",
            "X-CSRF-Token", "Authorization", "Proxy-Authorization", "X-Access-Key", "private_key", "X-Client-Key",
            "Ocp-Apim-Subscription-Key", "X-Functions-Key", "X-Credential", "X-Password",
        ]
        let ordinary = [
            "Accept", "Content-Type", "If-None-Match", "X-Request-Id", "Last-Event-ID", "X-Api-Version",
            "Sec-WebSocket-Key", "Idempotency-Key", "Idempotency_Key", "X-Idempotency-Token", "traceparent",
            "X-B3-TraceId", "X-Amz-Date", "X-Sort-Key", "X-Cache-Key", "X-Partition-Key", "X-Routing-Key",
            "X-Session-Id", "Signature", "Accept-Signature", "X-Page-Token", "X-Continuation-Token",
            "X-Authentication-Method", "X-Cookie-Consent", "X-Authored-By", "Key", "",
        ]
        for name in credentials { #expect(Origin.isCredentialName(name), "\(name)") }
        for name in ordinary { #expect(!Origin.isCredentialName(name), "\(name)") }
        // Every fragment, alone, at the start, in the middle and at the end of a name, in any
        // case: the scan picks candidates by each position's first two bytes.
        let fragments = [
            "secret", "password", "passwd", "credential", "authorization", "apikey", "api-key", "api_key",
            "master-key", "master_key", "auth-key", "auth_key", "access-key", "access_key", "private-key",
            "private_key", "client-key", "client_key", "subscription-key", "subscription_key", "functions-key",
            "rapidapi-key", "mashape-key",
        ]
        for fragment in fragments {
            for name in [fragment, fragment.uppercased(), "\(fragment)-Id", "X-\(fragment)-Id", "X-\(fragment)"] {
                #expect(Origin.isCredentialName(name), "\(name)")
            }
            // Cut short by one byte, it is no fragment (unless a shorter one is left).
            let cut = String(fragment.dropLast())
            if !fragments.contains(where: { cut.contains($0) }) {
                #expect(!Origin.isCredentialName("My-\(cut)"), "My-\(cut)")
            }
        }
    }
}
