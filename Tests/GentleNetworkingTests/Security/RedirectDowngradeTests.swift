import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rule every transport follows a redirect by (`RedirectTracker.nextRequest`, called by
/// `CurlTransport`'s loops and by `URLSessionTransport`'s redirect delegate): a hop from `https`
/// to `http` is never taken, whatever the status and however the `Location` is spelled. On the
/// wire (nginx TLS → a plain-text loopback server) in `RedirectCredentialTests`.
@Suite("An https response's redirect never leads to http")
struct RedirectDowngradeTests {
    static func next(
        from url: String, location: String, status: Int = 302, method: String = "GET"
    ) throws
        -> URLRequest?
    {
        let from = try #require(URL(string: url))
        let response = try #require(
            HTTPURLResponse(
                url: from, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Location": location]))
        var request = URLRequest(url: from)
        request.httpMethod = method
        let tracker = RedirectTracker(
            originalURL: from, originalMethod: method, maxRedirects: 10, credentialHeaders: [])
        return tracker.nextRequest(after: response, for: request)
    }

    @Test(
        "https → http is refused for every redirect status and spelling",
        arguments: [301, 302, 303, 307, 308], ["http://api.example.com/x", "HTTP://api.example.com/x", "http:/x"])
    func refused(status: Int, location: String) throws {
        #expect(try Self.next(from: "https://api.example.com/a", location: location, status: status) == nil)
        #expect(try Self.next(from: "HTTPS://api.example.com/a", location: location, status: status) == nil)
    }

    @Test(
        "Other hops are followed: https → https, http → http, http → https, relative and scheme-relative",
        arguments: [
            ("https://a.example/x", "https://b.example/y", "https://b.example/y"),
            ("https://a.example/x", "/y", "https://a.example/y"),
            ("https://a.example/x", "//b.example/y", "https://b.example/y"),
            ("http://a.example/x", "http://b.example/y", "http://b.example/y"),
            ("http://a.example/x", "https://b.example/y", "https://b.example/y"),
        ])
    func followed(from: String, location: String, expected: String) throws {
        #expect(try Self.next(from: from, location: location)?.url?.absoluteString == expected)
    }
}
