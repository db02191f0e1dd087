import Foundation
import Testing
import YNetwork

/// `dump(error)`, `String(reflecting:)` and `po` read an error's mirror: an ``HttpError`` shows its status, its
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

    @Test("A NetworkError's wrapped URLError or NSError is shown by its code, without its failing URL")
    func networkError() {
        let failing = URL(string: "https://api.example.com/me?access_token=FAILING-SECRET")!
        let errors: [YNetwork.NetworkError] = [
            .noInternet(URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: failing])),
            .invalidSSL(
                NSError(domain: NSURLErrorDomain, code: -1202, userInfo: [NSURLErrorFailingURLErrorKey: failing])),
        ]
        for error in errors {
            var text = ""
            dump(error, to: &text)
            #expect(!text.contains("FAILING-SECRET"), "\(text)")
            #expect(text.contains("noInternet") || text.contains("invalidSSL"), "\(text)")
        }
        var text = ""
        dump(YNetwork.NetworkError.unauthenticated, to: &text)
        #expect(text.contains("unauthenticated"))
        // Printed as before: the case, and its value in parentheses.
        #expect("\(YNetwork.NetworkError.invalidURL)" == "invalidURL")
        #expect(
            "\(YNetwork.NetworkError.unexpectedResponse(type: .none))"
                == "unexpectedResponse(type: YNetwork.ResponseContentType.none)")
        #expect("\(errors[0])".hasPrefix("noInternet("), "\(errors[0])")
        #expect(!"\(errors[0])".contains("FAILING-SECRET"))
    }
}
