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

    @Test("JSON and form bodies lose secret fields, at any depth, and are truncated")
    func bodies() {
        let json = Redactor.bodyExcerpt(
            Data(#"{"user":{"password":"p","name":"n"},"list":[{"refresh_token":"r"}]}"#.utf8), limit: 1000)
        #expect(json == #"{"list":[{"refresh_token":"<redacted>"}],"user":{"name":"n","password":"<redacted>"}}"#)
        #expect(Redactor.bodyExcerpt(Data("user=a&password=b".utf8), limit: 100) == "user=a&password=<redacted>")
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
        ] {
            #expect(Redactor.isSensitiveName(name), "\(name)")
        }
        for name in ["inside", "author", "id", "Accept", "Content-Type", "", "é", "tokn"] {
            #expect(!Redactor.isSensitiveName(name), "\(name)")
        }
    }
}
