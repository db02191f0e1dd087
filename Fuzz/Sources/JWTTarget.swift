import Foundation

@testable import YNetwork

/// JWT decoding (`JWTToken`), as YNetwork reads a token a server issued to decide when to
/// refresh it.
///
/// Input: the first byte picks the mode. Even: the rest is the token text. Odd: the rest is
/// split at the first `\n` into a header and a payload, which the harness base64url-encodes
/// (so the fuzzer reaches the claims with arbitrary JSON), with a fixed signature.
///
/// Asserts: no trap; only `JWTDecodeError` is thrown, and its description never holds the
/// token; a decoded token has three parts, keeps its text, and its claims and dates can all be
/// read (`isExpired` included, for any `exp`, NaN and infinity too).
enum JWTTarget {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    static func run(_ input: FuzzInput) {
        var input = input
        let token: String
        if input.byte() % 2 == 0 {
            token = String(decoding: input.rest(), as: UTF8.self)
        } else {
            let header = input.bytes(upTo: UInt8(ascii: "\n"))
            let payload = input.rest()
            token = base64URL(header) + "." + base64URL(payload) + ".c2lnbmF0dXJl"
        }
        do {
            let jwt = try JWTToken(jwtString: token, now: { now })
            if jwt.string != token { violated("the token text changed") }
            if token.split(separator: ".", omittingEmptySubsequences: false).count != 3 {
                violated("decoded a token without three parts")
            }
            _ = jwt.header
            _ = jwt.body
            _ = (jwt.issuer, jwt.subject, jwt.audience, jwt.identifier, jwt.signature)
            for date in [jwt.expiresAt, jwt.issuedAt, jwt.notBefore] {
                _ = date?.timeIntervalSinceNow
                _ = date.map { $0 <= now }
            }
            _ = jwt.isExpired
        } catch let error as JWTDecodeError {
            // Compared as bytes: Foundation's `contains` stops at a NUL.
            if token.utf8.count >= 12, MultipartTarget.contains(Array(error.description.utf8), Array(token.utf8)) {
                violated("the error quotes the token")
            }
        } catch {
            violated("a \(type(of: error)) thrown: \(error)")
        }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
