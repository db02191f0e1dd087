import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

@Suite("Redaction of cookies in bodies, and of large or truncated bodies")
struct RedactorCookieAndPrefixTests {
    @Test("Cookie and Set-Cookie fields in JSON and form bodies are redacted, whatever their spelling")
    func cookieFields() {
        for key in ["Cookie", "cookie", "Set-Cookie", "set_cookie", "cookies", "sid"] {
            let json = Redactor.bodyExcerpt(Data(#"{"headers":{"\#(key)":"sid=S3CR3T"},"ok":1}"#.utf8), limit: 1000)
            #expect(!json.contains("S3CR3T"), "\(key) leaked: \(json)")
            #expect(json.contains(#""\#(key)":"<redacted>""#))
            let form = Redactor.bodyExcerpt(Data("a=1&\(key)=sid%3DS3CR3T".utf8), limit: 1000)
            #expect(form == "a=1&\(key)=<redacted>", "\(key) leaked from a form: \(form)")
        }
        #expect(Redactor.bodyExcerpt(Data(#"{"inside":"kept"}"#.utf8), limit: 100) == #"{"inside":"kept"}"#)
    }

    @Test("A logger and an error message over the wire never show an echoed cookie")
    func echoedCookieOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/echo") { request in
            .json(#"{"headers":{"Cookie":"\#(request.header("Cookie") ?? "")"},"body":\#(request.bodyText)}"#)
        }
        server.route("POST", "/fail") { request in
            .json(#"{"error":"bad","headers":{"Set-Cookie":"\#(request.header("Cookie") ?? "")"}}"#, status: 400)
        }
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: URLSessionTransport(session: makeIsolatedSession()), logger: logger)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let body: [String: EndpointAnyEncodable] = [
            "set_cookie": EndpointAnyEncodable("sid=BODY-SID"), "name": EndpointAnyEncodable("alice"),
        ]
        try await service.requestVoid(
            to: Endpoint(path: "/echo", method: .post, body: body, headers: ["Cookie": "sid=WIRE-SID"]),
            via: environment)
        let records = logger.records
        #expect(records.map(\.event) == [.request, .response])
        #expect(server.requests(path: "/echo").first?.header("Cookie") == "sid=WIRE-SID", "the cookie was sent")
        let logged = records.map { "\($0.headers) \($0.bodyExcerpt ?? "")" }.joined(separator: "\n")
        #expect(!logged.contains("WIRE-SID") && !logged.contains("BODY-SID"), "a cookie leaked: \(logged)")
        #expect(records.first?.bodyExcerpt?.contains(#""set_cookie":"<redacted>""#) == true)
        #expect(records.last?.bodyExcerpt?.contains(#""Cookie":"<redacted>""#) == true)
        #expect(records.last?.bodyExcerpt?.contains("alice") == true)

        let error = await #expect(throws: NetworkError.self) {
            try await service.requestVoid(
                to: Endpoint(path: "/fail", method: .post, headers: ["Cookie": "sid=WIRE-SID"]), via: environment)
        }
        #expect(error?.message.contains(#""Set-Cookie":"<redacted>""#) == true, "\(error?.message ?? "")")
        #expect(error.map { !String(describing: $0).contains("WIRE-SID") } == true)
    }

    @Test("A 100 MiB error body is not parsed whole: the excerpt is quick and redacted")
    func hugeBody() {
        var body = Data(#"{"access_token":"TOKEN-SECRET","user":"alice","pad":""#.utf8)
        body.append(Data(repeating: UInt8(ascii: "a"), count: 100 * 1024 * 1024))
        body.append(Data(#"","password":"LATE-SECRET"}"#.utf8))
        // The shortest of up to three tries counts: parsing and re-serializing 100 MiB took
        // about 5 s here on every try, and one stall of a starved run must not decide.
        var excerpt = ""
        var elapsed = Double.infinity
        for _ in 0..<3 where elapsed >= 1 {
            let start = Date()
            excerpt = Redactor.bodyExcerpt(body, limit: 256)
            elapsed = min(elapsed, Date().timeIntervalSince(start))
        }
        #expect(elapsed < 1, "took \(elapsed) s: the whole body was parsed")
        #expect(excerpt.hasPrefix(#"{"access_token":"<redacted>","user":"alice","pad":"aaa"#), "\(excerpt.prefix(80))")
        #expect(!excerpt.contains("TOKEN-SECRET") && !excerpt.contains("LATE-SECRET"))
        #expect(excerpt.hasSuffix("… (\(body.count) bytes)"))
        #expect(excerpt.utf8.count < 256 + 40)
    }

    @Test("Secrets inside the first 256 bytes of a truncated JSON are redacted")
    func truncatedJSON() {
        let text =
            #"{"user":{"name":"alice","password":"PW-SECRET","session":{"id":"SESSION-SECRET"}},"#
            + #""list":[{"refresh_token":"R-SECRET"},"free \"text\""],"Cookie" : "sid=C-SECRET","n":12,"#
            + #""items":[1,2,3],"api_key":12345,"note":"cut here, the JSON never closes","secret":"CUT-SEC"#
        #expect(text.utf8.count > 256)
        let excerpt = Redactor.bodyExcerpt(Data(text.utf8), limit: 256)
        for secret in ["PW-SECRET", "SESSION-SECRET", "R-SECRET", "C-SECRET", "12345", "CUT-SEC"] {
            #expect(!excerpt.contains(secret), "\(secret) leaked: \(excerpt)")
        }
        #expect(excerpt.contains(#""password":"<redacted>""#))
        #expect(excerpt.contains(#""session":"<redacted>""#))
        #expect(excerpt.contains(#""Cookie" : "<redacted>""#))
        #expect(excerpt.contains(#""free \"text\"""#))

        let cut = Redactor.redactJSONPrefix(
            Array(#"{"a":"b","password":"hunter2-never-clo"#.utf8)[...], outputLimit: 1000)
        #expect(cut == #"{"a":"b","password":"<redacted>""#)
        let escaped = Redactor.redactJSONPrefix(Array(#"{"\u0043ookie":"sid=X1",}"#.utf8)[...], outputLimit: 1000)
        #expect(!escaped.contains("X1"), "an escaped name must not hide a cookie: \(escaped)")
        let nested = Redactor.redactJSONPrefix(
            Array(#"[{"token":{"a":["x","}"],"b":"Y2"},"k":"v"}]"#.utf8)[...], outputLimit: 1000)
        #expect(nested == #"[{"token":"<redacted>","k":"v"}]"#)
    }

    @Test("A JSON body too large to parse hides a refresh/access JWT as a parsed one does, and keeps other values")
    func largeJSONWithJWTPair() {
        let pad = String(repeating: "p", count: 100_000)
        let text =
            #"{"refresh":"eyJr-SEKRIT","access" : "eyJa-SEKRIT","mode":"refresh","access2":1,"#
            + #""refreshed":true,"pad":""# + pad + #""}"#
        let excerpt = Redactor.bodyExcerpt(Data(text.utf8), limit: 256)
        #expect(!excerpt.contains("SEKRIT"), "\(excerpt)")
        #expect(excerpt.contains(#""mode":"refresh""#) && excerpt.contains(#""refreshed":true"#), "\(excerpt)")
        // Not a JWT: kept, as in a parsed body.
        let plain = Redactor.redactJSONPrefix(Array(#"{"refresh":true,"access":"read"}"#.utf8)[...], outputLimit: 100)
        #expect(plain == #"{"refresh":true,"access":"read"}"#)
        let cut = Redactor.redactJSONPrefix(Array(#"{"access":"ey"#.utf8)[...], outputLimit: 100)
        #expect(cut == #"{"access":"<redacted>""#)
        // An escape cannot hide the prefix, as it cannot in a parsed body.
        let escaped = Redactor.redactJSONPrefix(
            Array(#"{"refresh":"\u0065yJhbGciOiJIUzI1NiJ9.e30.sig","access":"\u0041b"}"#.utf8)[...], outputLimit: 200)
        #expect(escaped == #"{"refresh":"<redacted>","access":"\u0041b"}"#)
    }

    @Test("A large non-JSON body is cut from its prefix; binary stays binary")
    func largeText() {
        var form = Data("user=a&password=SECRET&x=".utf8)
        form.append(Data(repeating: UInt8(ascii: "b"), count: 200_000))
        let excerpt = Redactor.bodyExcerpt(form, limit: 40)
        #expect(excerpt.hasPrefix("user=a&password=<redacted>&x=bbb"))
        #expect(!excerpt.contains("SECRET"))
        var binary = Data([0xFF, 0xFE, 0x00])
        binary.append(Data(repeating: 0, count: 100_000))
        #expect(Redactor.bodyExcerpt(binary, limit: 10) == "<100003 bytes of binary data>")
    }
}
