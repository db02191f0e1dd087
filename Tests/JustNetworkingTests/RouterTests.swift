import Foundation
import JustNetworking
import Testing

/// `Route`, `Router`'s defaults and `RequestFactory`, with routers that carry their own base URL
/// (the global one is covered by `GlobalBaseURLTests`).
@Suite("Router and RequestFactory")
struct RouterTests {
    @Test(
        "completeURL joins the base URL and the path with exactly one slash",
        arguments: [
            ("https://h", "user/12", "https://h/user/12"),
            ("https://h", "/user/12", "https://h/user/12"),
            ("https://h/", "user/12", "https://h/user/12"),
            ("https://h/", "/user/12", "https://h/user/12"),
            ("https://h/api", "user", "https://h/api/user"),
            ("https://h/api/", "/user", "https://h/api/user"),
            ("https://h/api/v2//", "//user/", "https://h/api/v2/user/"),
            ("https://h:8443/a%20b", "c%2Fd", "https://h:8443/a%20b/c%252Fd"),
            ("https://h/api", "users?page=2&q=a%20b", "https://h/api/users%3Fpage=2&q=a%2520b"),
            ("https://h/api?key=k", "users", "https://h/api/users?key=k"),
            ("https://h/api?key=k#top", "users?page=2", "https://h/api/users%3Fpage=2?key=k#top"),
            ("https://h/api", "", "https://h/api"),
        ])
    func completeURL(base: String, path: String, expected: String) throws {
        let router = Fixed(baseURL: try #require(URL(string: base)), route: Route(path: path, method: .get))
        #expect(router.completeURL.absoluteString == expected)
    }

    @Test(
        "completeURL percent-encodes what a path cannot hold, `?`, `#` and `%` included",
        arguments: [
            ("files/a b/é%20x", "https://h/api/files/a%20b/%C3%A9%2520x", "/api/files/a b/é%20x"),
            ("100%/50%zz", "https://h/api/100%25/50%25zz", "/api/100%/50%zz"),
            ("q?x=a b&y=\"{}\"", "https://h/api/q%3Fx=a%20b&y=%22%7B%7D%22", "/api/q?x=a b&y=\"{}\""),
            ("files/report#1.pdf", "https://h/api/files/report%231.pdf", "/api/files/report#1.pdf"),
        ])
    func completeURLEncoding(path: String, expected: String, decodedPath: String) throws {
        let router = Fixed(baseURL: try #require(URL(string: "https://h/api")), route: Route(path: path, method: .get))
        #expect(router.completeURL.absoluteString == expected)
        #expect(router.completeURL.path == decodedPath)
    }

    /// JustNetworking built `completeURL` with `baseURL.appendingPathComponent(route.path)`: a
    /// value interpolated into a route stays in the path, whatever it holds. Before, `?`, `#`
    /// and `%XX` in it were taken as URL syntax (a query added, the path cut, an escape kept).
    @Test(
        "completeURL encodes an interpolated value as JustNetworking's appendingPathComponent did",
        arguments: [
            "report#1.pdf", "a?admin=1", "a%2Fb", "..%2F..%2Fadmin", "a b", "é", "x&y=z;w", "[x]|^`\\", "%", "%%41",
            "?#", "a\r\nX-Injected: 1", "\u{0}",
        ])
    func completeURLMatchesSeed(name: String) throws {
        let base = try #require(URL(string: "https://h/api"))
        let router = Fixed(baseURL: base, route: Route(path: "files/\(name)", method: .get))
        let seed = base.appendingPathComponent("files/\(name)")
        #expect(router.completeURL.absoluteString == seed.absoluteString)
        #expect(router.completeURL.query == nil)
        #expect(router.completeURL.fragment == nil)
        #expect(router.completeURL.path == "/api/files/\(name)")
    }

    @Test(
        "A router prints as Swift prints its type, as in JustNetworking; errors name it by method and escaped path",
        arguments: JustNetworking.HTTPMethod.allCases)
    func description(method: JustNetworking.HTTPMethod) throws {
        let router = Fixed(
            baseURL: try #require(URL(string: "https://h")), route: Route(path: "user/12", method: method))
        #expect(router.routeDescription == "\(method.rawValue) user/12")
        #expect(String(describing: CaseRouter.user(id: "12")) == #"user(id: "12")"#)
        // A path from a value with CR/LF: the error's text stays one line.
        defer { NetworkConfiguration.reset() }
        NetworkConfiguration.reset()
        let injected = CaseRouter.user(id: "1\r\nINFO forged")
        #expect(throws: JustNetworkingError.self) { try RequestFactory(router: injected).makeURLRequest() }
        do {
            _ = try RequestFactory(router: injected).makeURLRequest()
        } catch {
            let text = String(describing: error)
            #expect(!text.contains("\r") && !text.contains("\n"), "\(text)")
        }
    }

    private enum CaseRouter: Router {
        case user(id: String)
        var route: Route {
            switch self {
            case .user(let id): Route(path: "user/\(id)", method: .get)
            }
        }
    }

    @Test("HTTPMethod's raw values are the tokens sent on the wire")
    func methodTokens() {
        #expect(
            JustNetworking.HTTPMethod.allCases.map(\.rawValue) == ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
        #expect(JustNetworking.HTTPMethod(rawValue: "OPTIONS") == .option)
    }

    @Test("Route is a value: equal path and method are equal and hash alike")
    func routeValue() {
        #expect(Route(path: "a", method: .get) == Route(path: "a", method: .get))
        #expect(Route(path: "a", method: .get) != Route(path: "a", method: .post))
        #expect(Set([Route(path: "a", method: .get), Route(path: "a", method: .get)]).count == 1)
    }

    @Test("RequestFactory sets the URL and method, then applies the builder")
    func factory() throws {
        let router = Fixed(
            baseURL: try #require(URL(string: "https://h/api")), route: Route(path: "items", method: .patch))
        let factory = RequestFactory(
            router: router,
            requestBuilder: compose(addHeaders(["X-A": "1"]), set(to: \.httpMethod, "PUT")))

        let request = try factory.makeURLRequest()

        #expect(request.url?.absoluteString == "https://h/api/items")
        #expect(request.httpMethod == "PUT")  // The builder runs after the route's method is set.
        #expect(request.value(forHTTPHeaderField: "X-A") == "1")
        #expect(factory.urlRequest == request)
    }

    @Test("RequestFactory's default builder is identity")
    func factoryDefault() throws {
        let router = Fixed(baseURL: try #require(URL(string: "https://h")), route: Route(path: "x", method: .delete))
        let request = RequestFactory(router: router).urlRequest
        #expect(request.url?.absoluteString == "https://h/x")
        #expect(request.httpMethod == "DELETE")
        #expect(request.allHTTPHeaderFields ?? [:] == [:])
    }

    @Test("A router that overrides completeURL alone is not taken for an unset base URL")
    func completeURLOverride() throws {
        struct Absolute: Router {
            let completeURL: URL
            var route: Route { Route(path: "ignored", method: .get) }
        }
        let url = try #require(URL(string: "https://elsewhere/exact?x=1"))
        let request = try RequestFactory(router: Absolute(completeURL: url)).makeURLRequest()
        #expect(request.url == url)
    }

    @Test("A router whose base URL is the placeholder fails to build, with its description")
    func placeholderBase() {
        let router = Fixed(baseURL: NetworkConfiguration.unsetBaseURL, route: Route(path: "user/12", method: .get))
        #expect(throws: JustNetworkingError.baseURLNotSet(router: "GET user/12")) {
            try RequestFactory(router: router).makeURLRequest()
        }
        let request = RequestType<Void>(requestFactory: RequestFactory(router: router))
        #expect(throws: JustNetworkingError.baseURLNotSet(router: "GET user/12")) {
            try request.makeURLRequest()
        }
        // The non-throwing accessor still answers, on the placeholder.
        #expect(request.urlRequest.url?.absoluteString == "file:///justnetworking-base-url-not-set/user/12")
    }

    @Test("A base URL that merely starts like the placeholder is not the placeholder")
    func placeholderLookalike() throws {
        let base = try #require(URL(string: "file:///justnetworking-base-url-not-set-but-real"))
        let router = Fixed(baseURL: base, route: Route(path: "x", method: .get))
        #expect(try RequestFactory(router: router).makeURLRequest().url?.absoluteString == base.absoluteString + "/x")
    }
}

/// A router with a given base URL and route.
private struct Fixed: Router {
    let baseURL: URL
    let route: Route
}
