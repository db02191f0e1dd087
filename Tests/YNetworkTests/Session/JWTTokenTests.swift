import Foundation
import Testing
import YNetwork

private func base64URL(_ text: String) -> String {
    Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

private func token(_ payload: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#) -> String {
    base64URL(header) + "." + base64URL(payload) + ".c2lnbmF0dXJl"
}

@Suite("JWTToken: standard claims, expiry, and malformed input that throws instead of crashing")
struct JWTTokenTests {
    @Test(
        "A time claim that is not a finite decimal number (nan, inf, 1e999, hexadecimal) is absent",
        arguments: ["nan", "inf", "-inf", "1e999", "0x1p40", "infinity"])
    func unusableTimeClaims(text: String) throws {
        let jwt = try JWTToken(jwtString: token(#"{"exp":"\#(text)","iat":"\#(text)","nbf":"\#(text)"}"#))
        // Before: a NaN expiry, which never expired; 0x1p40 read as a date in 36812.
        #expect(jwt.expiresAt == nil)
        #expect(jwt.issuedAt == nil)
        #expect(jwt.notBefore == nil)
        let decimal = try JWTToken(jwtString: token(#"{"exp":"2e9"}"#))
        #expect(decimal.expiresAt == Date(timeIntervalSince1970: 2_000_000_000))
    }

    @Test("The standard claims are read; a single audience becomes an array")
    func claims() throws {
        let jwt = try JWTToken(
            jwtString: token(
                #"{"exp":2000000000,"iat":1700000000,"nbf":"1700000001","iss":"issuer","sub":"user-1","aud":"app","jti":"id-9","role":"admin"}"#
            ))
        #expect(jwt.expiresAt == Date(timeIntervalSince1970: 2_000_000_000))
        #expect(jwt.issuedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(jwt.notBefore == Date(timeIntervalSince1970: 1_700_000_001))
        #expect(jwt.issuer == "issuer")
        #expect(jwt.subject == "user-1")
        #expect(jwt.audience == ["app"])
        #expect(jwt.identifier == "id-9")
        #expect(jwt.body["role"] as? String == "admin")
        #expect(jwt.header["alg"] as? String == "HS256")
        #expect(jwt.signature == "c2lnbmF0dXJl")
        // Unsigned (`alg: none`): an empty signature, as Y-Network gives it (not nil).
        let unsigned = try JWTToken(
            jwtString: String(token("{}").split(separator: ".")[0...1].joined(separator: ".")) + ".")
        #expect(unsigned.signature == "")
        let multi = try JWTToken(jwtString: token(#"{"aud":["a","b"]}"#))
        #expect(multi.audience == ["a", "b"])
    }

    @Test("isExpired compares exp with the clock: past and now are expired, future and absent are not")
    func expiry() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func expired(_ payload: String) throws -> Bool {
            try JWTToken(jwtString: token(payload), now: { now }).isExpired
        }
        #expect(try expired(#"{"exp":1799999999}"#))
        #expect(try expired(#"{"exp":1800000000}"#))
        #expect(try !expired(#"{"exp":1800000001}"#))
        #expect(try !expired(#"{"sub":"no exp"}"#))
    }

    @Test(
        "Malformed tokens throw the matching JWTDecodeError",
        arguments: [
            ("", JWTDecodeError.invalidPartCount("", 1)),
            ("a.b", JWTDecodeError.invalidPartCount("a.b", 2)),
            ("a.b.c.d", JWTDecodeError.invalidPartCount("a.b.c.d", 4)),
            ("!!!.e30.sig", JWTDecodeError.invalidBase64("!!!")),
            ("e30.a.sig", JWTDecodeError.invalidBase64("a")),
            ("e30.\(base64URL("not json")).sig", JWTDecodeError.invalidJSON(base64URL("not json"))),
            ("e30.\(base64URL("[1,2]")).sig", JWTDecodeError.invalidJSON(base64URL("[1,2]"))),
            ("\(base64URL("[]")).e30.sig", JWTDecodeError.invalidJSON(base64URL("[]"))),
        ])
    func malformed(input: String, expected: JWTDecodeError) {
        #expect(throws: expected) { try JWTToken(jwtString: input) }
    }

    @Test(
        "A token written over indented lines (spaces, tabs, line breaks inside its parts) decodes; other junk does not")
    func whitespaceInsideParts() throws {
        let plain = token(#"{"iss":"yml","exp":1643338147}"#)
        let parts = plain.split(separator: ".").map(String.init)
        let spaced =
            String(parts[0].prefix(8)) + "\n    " + String(parts[0].dropFirst(8)) + ".\t" + parts[1] + "  ." + parts[2]
        let jwt = try JWTToken(jwtString: spaced)
        #expect(jwt.issuer == "yml")
        #expect(jwt.expiresAt == Date(timeIntervalSince1970: 1_643_338_147))
        #expect(jwt.string == spaced, "the string is kept as given")
        #expect(throws: JWTDecodeError.invalidBase64("e3*0")) { try JWTToken(jwtString: "e3*0.e30.sig") }
    }

    @Test("Error descriptions never repeat the token, which is a credential")
    func descriptionsHideToken() {
        let secret = "secret-token-value"
        for error in [
            JWTDecodeError.invalidPartCount(secret, 1), .invalidBase64(secret), .invalidJSON(secret),
        ] {
            #expect(!error.description.contains(secret))
            // What a careless `dump(error)`, `debugPrint` or string interpolation shows, and
            // what `print` of an `any Error` shows.
            var dumped = ""
            dump(error, to: &dumped)
            let erased: any Error = error
            for shown in [dumped, String(reflecting: error), "\(error)", String(describing: erased), "\([error])"] {
                #expect(!shown.contains(secret), "\(shown)")
                #expect(shown.contains("JWT") || shown.contains("invalid"), "\(shown)")
            }
        }
    }
}
