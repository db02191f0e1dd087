import Foundation
import Testing
import YNetwork

/// `dump(error)` and debuggers read an error's mirror: an ``HttpError`` shows its status, its
/// headers with credentials replaced and its body by size with its start redacted.
@Suite("Y-Network: what dump shows of an HttpError")
struct YNetworkErrorReflectionTests {
    @Test("An HttpError's dump hides a Set-Cookie and a body's credential; the properties keep them")
    func httpError() {
        let error = HttpError(
            statusCode: 403,
            headers: [
                "Set-Cookie": "sid=COOKIE-SECRET", "X-Api-Key": "KEY-SECRET", "Content-Type": "application/json",
            ],
            data: Data(#"{"access_token":"BODY-SECRET","error":"forbidden"}"#.utf8))
        var text = ""
        dump(error, to: &text)
        for secret in ["COOKIE-SECRET", "KEY-SECRET", "BODY-SECRET"] {
            #expect(!text.contains(secret), "\(secret) shown:\n\(text)")
        }
        #expect(text.contains("statusCode: 403"))
        #expect(text.contains(#"\"error\":\"forbidden\""#), "\(text)")
        #expect(text.contains("\(error.data.count) bytes"))
        #expect(error.header("set-cookie") == "sid=COOKIE-SECRET")
        #expect(String(decoding: error.data, as: UTF8.self).contains("BODY-SECRET"))
    }
}
