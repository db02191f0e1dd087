import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import JustNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A session delegate with no redirect method of its own: the session follows redirects itself.
private final class PlainSessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {}

/// The `URLSession` requester over a session with a delegate of its own: on Apple platforms the
/// session follows the redirect, and the requester's task delegate (`RedirectCredentialGuard`)
/// applies the transports' rules first; on Linux it sends through a `URLSessionTransport` (see
/// `OwnDelegateSessionTransportTests`). Every wire test asserts what the second origin received.
@Suite("JustNetworking: a session with its own delegate follows redirects by the transports' rules")
struct OwnDelegateSessionRedirectTests {
    static func session(headers: [String: String] = [:]) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = headers
        return URLSession(configuration: configuration, delegate: PlainSessionDelegate(), delegateQueue: nil)
    }

    static func everything(_ requests: [LoopbackRequest]) -> String {
        requests.flatMap(\.headers).map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    @Test("A `//other-host` Location gets neither the URL's password nor the credential headers")
    func userInfoAndHeaders() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/start") { _ in .redirect(to: "//localhost:\(server.port)/landing") }
        server.route("GET", "/landing") { _ in .status(204) }
        let session = Self.session()
        defer { session.invalidateAndCancel() }
        let base = try #require(URL(string: "http://user:url-secret@127.0.0.1:\(server.port)"))
        let marked = MarkedQueue()
        let factory = RequestFactory(
            router: FixedBaseRouter(base, "start"),
            requestBuilder: addHeaders([
                "Cookie": "session=cookie-secret", "X-Api-Key": "key-secret", "PRIVATE-TOKEN": "gitlab-secret",
            ]))

        let delivery = await deliver(
            RequestType<Void>(responseQueue: marked.queue, requestFactory: factory), via: session, checking: marked)

        #expect(delivery.error == nil, "\(String(describing: delivery.error))")
        let first = try #require(server.requests(path: "/start").first)
        #expect(first.header("Authorization")?.hasPrefix("Basic ") == true, "the first origin got the URL's password")
        #expect(first.header("Cookie") == "session=cookie-secret")
        let landed = try #require(server.requests(path: "/landing").first)
        #expect(landed.header("Host")?.hasPrefix("localhost") == true, "the hop went to the other host name")
        #expect(!Self.everything([landed]).contains("secret"), "\(Self.everything([landed]))")
        #expect(landed.header("Authorization") == nil, "the URL's password, as Basic: \(Self.everything([landed]))")
    }

    @Test(
        "A credential the session's configuration adds is never taken to another origin (Apple: that redirect is the response)"
    )
    func sessionCredentialHeaders() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let other = try LoopbackServer()
        defer { other.shutdown() }
        other.route("GET", "/landing") { _ in .status(204) }
        server.route("GET", "/away") { _ in .redirect(to: other.url("/landing").absoluteString) }
        server.route("GET", "/old") { _ in .redirect(to: "/new") }
        server.route("GET", "/new") { _ in .status(204) }
        let session = Self.session(headers: ["Authorization": "Bearer session-secret"])
        defer { session.invalidateAndCancel() }

        let marked = MarkedQueue()
        let away = await deliver(
            RequestType<Void>(
                responseQueue: marked.queue,
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "away"))),
            via: session, checking: marked)

        #if canImport(Darwin)
            guard case .unacceptableStatusCode(let status, _, _)? = away.error as? JustNetworkingError else {
                Issue.record("\(String(describing: away.error))")
                return
            }
            #expect(status == 302)
            #expect(other.acceptedConnectionCount == 0, "\(Self.everything(other.receivedRequests))")
        #else
            // Linux sends through a URLSessionTransport, which puts the configuration's headers on
            // each request itself and drops the credentials among them on a hop to another origin.
            #expect(away.error == nil, "\(String(describing: away.error))")
            #expect(other.requests(path: "/landing").count == 1)
            #expect(!Self.everything(other.receivedRequests).contains("session-secret"))
        #endif

        let same = await deliver(
            RequestType<Void>(
                responseQueue: marked.queue,
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "old"))),
            via: session, checking: marked)
        #expect(same.error == nil, "a same-origin redirect is still followed: \(String(describing: same.error))")
        #expect(server.requests(path: "/new").first?.header("Authorization") == "Bearer session-secret")
    }

    #if canImport(Darwin)
        // The task delegate's rules (Apple platforms; Linux sends through a URLSessionTransport).
        @Test(
            "A session header named like a credential refuses a cross-origin hop; an ordinary one does not",
            arguments: [
                ("X-Sort-Key", true), ("X-Session-Id", true), ("X-Master-Key", false), ("PRIVATE-TOKEN", false),
            ])
        func sessionHeaderNames(name: String, followed: Bool) throws {
            let session = Self.session(headers: [name: "value-1234567890"])
            defer { session.invalidateAndCancel() }
            let from = try #require(URL(string: "https://api.example/a"))
            let to = try #require(URL(string: "https://cdn.example/b"))
            let response = try #require(
                HTTPURLResponse(
                    url: from, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: ["Location": to.absoluteString]))
            let next = RedirectCredentialGuard.nextRequest(
                URLRequest(url: to), after: response, originalURL: from, session: session)
            #expect((next != nil) == followed, "\(name)")
        }

        @Test(
            "https → http, and a scheme other than http(s), are not followed; https → https and http → https are",
            arguments: [
                ("https://api.example/a", "http://api.example/b", false),
                ("https://api.example/a", "ftp://api.example/b", false),
                ("https://api.example/a", "https://other.example/b", true),
                ("http://api.example/a", "https://api.example/b", true),
            ])
        func schemes(from: String, to: String, followed: Bool) throws {
            let session = Self.session()
            defer { session.invalidateAndCancel() }
            let fromURL = try #require(URL(string: from))
            let response = try #require(
                HTTPURLResponse(url: fromURL, statusCode: 307, httpVersion: "HTTP/1.1", headerFields: ["Location": to]))
            let next = RedirectCredentialGuard.nextRequest(
                URLRequest(url: try #require(URL(string: to))), after: response, originalURL: URL(string: from),
                session: session)
            #expect((next != nil) == followed)
            if followed { #expect(next?.url?.absoluteString == to) }
        }

        @Test(
            "An http → https upgrade on the same host is followed, with the session's credential; another host is not")
        func upgradeKeepsSessionCredential() throws {
            let session = Self.session(headers: ["Authorization": "Bearer session-secret"])
            defer { session.invalidateAndCancel() }
            let from = try #require(URL(string: "http://api.example/v1"))
            for (to, followed) in [("https://api.example/v1", true), ("https://other.example/v1", false)] {
                let target = try #require(URL(string: to))
                let response = try #require(
                    HTTPURLResponse(url: from, statusCode: 301, httpVersion: "HTTP/1.1", headerFields: ["Location": to])
                )
                var request = URLRequest(url: target)
                request.setValue("Bearer request-secret", forHTTPHeaderField: "Authorization")
                let next = RedirectCredentialGuard.nextRequest(
                    request, after: response, originalURL: from, session: session)
                #expect((next != nil) == followed, "\(to)")
                // The request's own credential is dropped on the upgrade, as every transport drops it.
                #expect(next?.value(forHTTPHeaderField: "Authorization") == nil, "\(to)")
            }
        }
    #endif

    @Test(
        "A request's usable timeout is left alone (it overrides the session's once set); NaN and infinity are clamped")
    func requestTimeouts() throws {
        let base = try #require(URL(string: "http://api.example"))
        for (given, expected) in [(300.0, 300.0), (5, 5), (.infinity, 1e9), (.nan, 60), (-1, 60)] as [(Double, Double)]
        {
            let factory = RequestFactory(
                router: FixedBaseRouter(base, "t"), requestBuilder: set(to: \.timeoutInterval, given))
            let request = RequestType<Void>(requestFactory: factory)
            let built = RequesterDelivery.urlRequest(for: request) { _ in }
            #expect(built?.timeoutInterval == expected, "\(given)")
        }
    }
}
