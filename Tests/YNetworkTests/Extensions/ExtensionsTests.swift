import Foundation
import Testing

@testable import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private enum Plain: Error { case first, second }

private struct Coded: Error, CustomNSError {
    static var errorDomain: String { "com.example.coded" }
    var errorCode: Int { 42 }
    var errorUserInfo: [String: Any] { ["reason": "because"] }
}

@Suite("Error, String and CharacterSet helpers as Y-Network declares them")
struct HelperExtensionsTests {
    @Test("Error.code, .domain and .userInfo read the NSError bridge")
    func errorBridge() {
        let coded: any Error = Coded()
        #expect(coded.code == 42)
        #expect(coded.domain == "com.example.coded")
        #expect(coded.userInfo["reason"] as? String == "because")
        let ns: any Error = NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotFindHost)
        #expect(ns.code == NSURLErrorCannotFindHost)
        #expect(ns.domain == NSURLErrorDomain)
        let plain: any Error = Plain.second
        #expect(plain.code == 1)
        #expect(plain.userInfo.isEmpty)
    }

    @Test("matches(regex:) finds a match anywhere; an invalid pattern is false, not a crash")
    func regex() {
        #expect("order-1234".matches(regex: "[0-9]{4}"))
        #expect(!"order-12".matches(regex: "^[0-9]+$"))
        #expect("ABC".matches(regex: "^[A-Z]+$"))
        #expect(!"anything".matches(regex: "(unclosed"))
        #expect(!"".matches(regex: "a"))
    }

    @Test("isAbsoluteURLPath: http, https, ftp and ftps in any case; nothing else")
    func absolutePaths() {
        for path in ["http://a", "https://a", "ftp://a", "ftps://a", "HTTPS://A", "FtP://a"] {
            #expect(path.isAbsoluteURLPath, "\(path)")
        }
        for path in ["/users", "users", "file:///etc/passwd", "ftpx://a", "mailto:a@b", "https:/a", " https://a"] {
            #expect(!path.isAbsoluteURLPath, "\(path)")
        }
    }

    @Test("formUrlAllowed is urlQueryAllowed without + & = / ?")
    func formAllowed() {
        for character in "+&=/?" {
            #expect(!CharacterSet.formUrlAllowed.contains(character.unicodeScalars.first!), "\(character)")
        }
        for character in "aZ09-._~" {
            #expect(CharacterSet.formUrlAllowed.contains(character.unicodeScalars.first!), "\(character)")
        }
        #expect("a b&c".addingPercentEncoding(withAllowedCharacters: .formUrlAllowed) == "a%20b%26c")
    }

    @Test("ImageContentType values are the image MIME types")
    func imageTypes() {
        #expect(ImageContentType.allCases.map(\.value) == ["image/jpg", "image/jpeg", "image/png", "image/gif"])
    }
}

@Suite("String interpolations \\(json:) and \\(request:)")
struct InterpolationTests {
    @Test("\\(json:) pretty-prints JSON, fragments too, and says when the data is not JSON")
    func json() {
        let text = "\(json: Data(#"{"b":[1,2],"a":"x"}"#.utf8))"
        #expect(text.contains("\n"))
        #expect(text.contains(#""a" : "x""#))
        #expect("\(json: Data("42".utf8))" == "42")
        #expect("\(json: Data("not json".utf8))" == "Invalid JSON data")
        #expect("\(json: Data())" == "Invalid JSON data")
    }

    @Test("\\(json:) of deeply nested JSON stops at its output limit and says so (160 MB of text before)")
    func deepJSONIsBounded() throws {
        // 400 levels, then 20,000 elements, each on its own line behind 800 spaces: 16 MB of
        // text from 40 KB. The limit is 64 KiB here (16 MiB by default, which takes minutes to
        // write under ThreadSanitizer and held a pool thread for two of them).
        let depth = 400
        var body = String(repeating: "[", count: depth)
        body += Array(repeating: "0", count: 20_000).joined(separator: ",")
        body += String(repeating: "]", count: depth)
        let text = try #require(PrettyJSON.text(Data(body.utf8), limit: 1 << 16))
        #expect(text.utf8.count <= (1 << 16) + 200)
        #expect(text.hasSuffix("bytes of the JSON not shown)"), "\(text.suffix(120))")
        #expect(text.hasPrefix("[\n  [\n    ["))
        #expect(PrettyJSON.maxOutputBytes == 16 << 20)
    }

    @Test("\\(json:) of deeply nested UTF-16 JSON stops at its output limit too (269 MB of text before)")
    func deepUTF16JSONIsBounded() throws {
        let depth = 400
        var body = String(repeating: "[", count: depth)
        body += Array(repeating: "0", count: 20_000).joined(separator: ",")
        body += String(repeating: "]", count: depth)
        let utf16 = try #require(body.data(using: .utf16BigEndian))
        let text = try #require(PrettyJSON.text(utf16, limit: 1 << 16))
        #expect(text.utf8.count <= (1 << 16) + 200)
        #expect(text.hasSuffix("bytes of the JSON not shown)"), "\(text.suffix(120))")
    }

    @Test("\\(json:) keeps the keys in the order the data has them, and strings and numbers as written")
    func jsonOrder() {
        let body = #"{"name": "Durian", "points": 600, "ratio": 1.50, "note": "a\/b \"q\" , : { ["}"#
        #expect(
            "\(json: Data(body.utf8))"
                == "{\n  \"name\" : \"Durian\",\n  \"points\" : 600,\n  \"ratio\" : 1.50,\n"
                + "  \"note\" : \"a\\/b \\\"q\\\" , : { [\"\n}")
        // A UTF-8 byte order mark is skipped; nesting and empty containers are laid out as
        // JSONSerialization's .prettyPrinted lays them out.
        #expect(
            "\(json: Data([0xEF, 0xBB, 0xBF] + Array(#"{"z":{},"y":[],"x":[1,{"w":null}]}"#.utf8)))"
                == "{\n  \"z\" : {\n\n  },\n  \"y\" : [\n\n  ],\n"
                + "  \"x\" : [\n    1,\n    {\n      \"w\" : null\n    }\n  ]\n}")
    }

    @Test("\\(json:) lays keys out as JSONSerialization's .prettyPrinted does, whatever the input's spacing")
    func jsonMatchesSerialization() throws {
        let inputs = [
            #"{"a":1,"b":[true,false,null],"c":{"d":"e","f":[]},"g":{}}"#,
            " [ 1 ,\t2 ,\r\n [ ] , { \"k\" : [ { } ] } ] ", "{}", "[]", #""text""#, "42",
        ]
        for input in inputs {
            let object = try JSONSerialization.jsonObject(with: Data(input.utf8), options: [.fragmentsAllowed])
            let expected = try JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed])
            #expect("\(json: Data(input.utf8))" == String(decoding: expected, as: UTF8.self), "\(input)")
        }
        // UTF-16 JSON (which JSONSerialization reads) is printed from the parsed value.
        let utf16 = try #require(#"{"b":1,"a":2}"#.data(using: .utf16BigEndian))
        #expect("\(json: utf16)" == "{\n  \"a\" : 2,\n  \"b\" : 1\n}")
    }

    @Test("\\(request:) shows method, URL, headers and the JSON body, tab-separated")
    func request() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/users?page=2")))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"name":"Ada"}"#.utf8)
        let parts = "\(request: request)".components(separatedBy: "\t")
        #expect(parts.count == 4)
        #expect(parts[0] == "POST")
        #expect(parts[1] == "https://api.example.com/users?page=2")
        #expect(parts[2] == #"Headers: ["Content-Type": "application/json"]"#)
        #expect(parts[3].contains(#""name" : "Ada""#))
    }

    @Test("\\(request:) never prints credentials: headers, query, fragment, URL password, JSON fields")
    func redacts() throws {
        let url = try #require(
            URL(
                string:
                    "https://user:hunter2@api.example.com/login?api_key=K3Y-VALUE&page=1&access_token=T0KEN#id_token=FR4G&state=s1"
            ))
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Bearer s3cr3t-bearer", forHTTPHeaderField: "Authorization")
        request.setValue("session=c00kie-value", forHTTPHeaderField: "Cookie")
        request.setValue("pr0xy", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("x-k3y", forHTTPHeaderField: "X-API-Key")
        request.setValue("visible", forHTTPHeaderField: "X-Trace")
        // What the library's log records hide is hidden here too (these were printed).
        request.setValue("auth-k3y", forHTTPHeaderField: "X-Auth-Key")
        request.setValue("apim-k3y", forHTTPHeaderField: "Ocp-Apim-Subscription-Key")
        request.httpBody = Data(
            #"{"user":"ada","password":"pa55word","nested":[{"refresh_token":"r3fresh"}],"jwt":"eyJ-jwt","private_key":"pk-1","upload":"https://s3.example/u?X-Amz-Signature=s1gnature"}"#
                .utf8)

        let text = "\(request: request)"
        var google = URLRequest(
            url: try #require(URL(string: "https://ghp_US3RT0KEN@maps.example.com/v1?key=AIzaK3Y&sig=S1G")))
        google.httpMethod = "GET"
        let other = "\(request: google)"

        for secret in [
            "hunter2", "K3Y-VALUE", "T0KEN", "s3cr3t-bearer", "c00kie-value", "pr0xy", "x-k3y", "pa55word", "r3fresh",
            "FR4G", "auth-k3y", "apim-k3y", "eyJ-jwt", "pk-1", "s1gnature",
        ] {
            #expect(!text.contains(secret), "\(secret) leaked: \(text)")
        }
        for secret in ["US3RT0KEN", "AIzaK3Y", "S1G"] {
            #expect(!other.contains(secret), "\(secret) leaked: \(other)")
        }
        // A fragment that is all one encoded form (`#%2Fcb%3Faccess_token%3D…`, no `=` as such).
        let encoded =
            "\(request: URLRequest(url: try #require(URL(string: "https://h.example/cb#%2Fcb%3Faccess_token%3DENC0DED"))))"
        #expect(!encoded.contains("ENC0DED") && encoded.contains("#%2Fcb%3Faccess_token%3D"), "\(encoded)")
        #expect(text.contains("Bearer <redacted>"))
        #expect(text.contains("visible"))
        #expect(text.contains("page=1") && text.contains("state=s1"))
        #expect(text.contains(#""user" : "ada""#))
    }

    @Test("\\(request:) hides what the log records hide: ';' pairs, code, path parameters, URL headers, echoed values")
    func redactsAsLogRecordsDo() throws {
        let url = try #require(
            URL(
                string:
                    "https://api.example.com/app;jsessionid=js-SEKRIT/items?a=1;api_key=q-SEKRIT&code=c-SEKRIT#a=1;access_token=f-SEKRIT"
            ))
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Bearer bearer-SEKRIT", forHTTPHeaderField: "Authorization")
        request.setValue("https://x.example/cb?access_token=ref-SEKRIT", forHTTPHeaderField: "Referer")
        request.setValue("bearer-SEKRIT", forHTTPHeaderField: "X-Echo")
        request.httpBody = Data(#"{"note":"bearer-SEKRIT","n":1}"#.utf8)
        let text = "\(request: request)"
        #expect(!text.contains("SEKRIT"), "\(text)")
        #expect(
            text.contains("/items?a=1") && text.contains("Bearer <redacted>") && text.contains(#""n" : 1"#), "\(text)")
    }

    @Test("\\(request:) shows a non-JSON or very large body by its length only")
    func opaqueBodies() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/form")))
        request.httpMethod = "POST"
        request.httpBody = Data("password=pa55word".utf8)
        #expect("\(request: request)".hasSuffix("Content-Length: 17 bytes"))
        let big = "[" + Array(repeating: #""x""#, count: 20_000).joined(separator: ",") + "]"
        request.httpBody = Data(big.utf8)
        #expect("\(request: request)".hasSuffix("Content-Length: \(big.utf8.count) bytes"))
    }
}

@Suite("URLRequest.writeDataToFile()")
struct WriteDataToFileTests {
    @Test("Writes the body to a new owner-only file in the temporary directory")
    func writesBody() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/upload")))
        request.httpBody = Data("payload".utf8)
        let first = try request.writeDataToFile()
        defer { try? FileManager.default.removeItem(at: first) }
        let second = try request.writeDataToFile()
        defer { try? FileManager.default.removeItem(at: second) }

        #expect(first != second)
        #expect(
            first.deletingLastPathComponent().standardizedFileURL.path
                == FileManager.default.temporaryDirectory.standardizedFileURL.path)
        #expect(try Data(contentsOf: first) == Data("payload".utf8))
        let mode = try FileManager.default.attributesOfItem(atPath: first.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }

    @Test("No body gives an empty file; a stream body is refused and left unread")
    func edgeBodies() throws {
        let url = try #require(URL(string: "https://api.example.com/upload"))
        let empty = try URLRequest(url: url).writeDataToFile()
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(try Data(contentsOf: empty).isEmpty)

        var streamed = URLRequest(url: url)
        streamed.httpBodyStream = InputStream(data: Data("stream".utf8))
        #expect(throws: URLRequestFileError.streamBody) { try streamed.writeDataToFile() }
    }
}
