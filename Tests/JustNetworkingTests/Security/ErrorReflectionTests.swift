import Foundation
import JustNetworking
import Testing

/// `dump(error)`, `String(reflecting:)` and `po` read an error's mirror: a status error shows its headers with
/// credentials replaced and its body by size with its start redacted; the other cases as they are.
@Suite("JustNetworking: what dump shows of an error")
struct JustNetworkingErrorReflectionTests {
    @Test("A status error's dump hides a Set-Cookie and a body's credential; the values keep them")
    func statusError() {
        let body = Data(#"{"password":"BODY-SECRET","error":"forbidden"}"#.utf8)
        let error = JustNetworkingError.unacceptableStatusCode(
            statusCode: 401, headers: ["Set-Cookie": "sid=COOKIE-SECRET", "WWW-Authenticate": "Bearer"], body: body)
        var text = ""
        dump(error, to: &text)
        #expect(!text.contains("COOKIE-SECRET") && !text.contains("BODY-SECRET"), "\(text)")
        #expect(text.contains("unacceptableStatusCode"))
        #expect(text.contains("statusCode: 401"))
        #expect(text.contains(#"\"error\":\"forbidden\""#), "\(text)")
        #expect(text.contains("WWW-Authenticate"))
        guard case .unacceptableStatusCode(_, let headers, let kept) = error else {
            Issue.record("not a status error")
            return
        }
        #expect(headers["Set-Cookie"] == "sid=COOKIE-SECRET" && kept == body)

        var other = ""
        dump(JustNetworkingError.invalidRequest(reason: "The header name X\\r\\nY is not a token."), to: &other)
        #expect(other.contains("invalidRequest") && other.contains("is not a token"), "\(other)")
    }
}
