import Foundation
import JustNetworking
import Testing

/// The composition helpers, on plain `URLRequest` values.
@Suite("RequestBuilder composition")
struct RequestBuilderTests {
    private func request(_ url: String) throws -> URLRequest {
        URLRequest(url: try #require(URL(string: url)))
    }

    @Test("compose applies builders left to right; none is identity")
    func composeOrder() throws {
        let base = try request("https://h/x")
        let order = compose(
            addHeaders(["X-Order": "first"]), addHeaders(["X-Order": "second"]), set(to: \.timeoutInterval, 7))
        #expect(order(base).value(forHTTPHeaderField: "X-Order") == "second")
        #expect(order(base).timeoutInterval == 7)
        let reversed = compose(addHeaders(["X-Order": "second"]), addHeaders(["X-Order": "first"]))
        #expect(reversed(base).value(forHTTPHeaderField: "X-Order") == "first")
        #expect(compose()(base) == base)
        #expect(identity(base) == base)
    }

    @Test("set(to:_:) writes through the key path")
    func setKeyPath() throws {
        let changed = compose(
            set(to: \.cachePolicy, .reloadIgnoringLocalCacheData), set(to: \.httpBody, Data("b".utf8)),
            set(to: \.httpShouldHandleCookies, false))(try request("https://h/x"))
        #expect(changed.cachePolicy == .reloadIgnoringLocalCacheData)
        #expect(changed.httpBody == Data("b".utf8))
        #expect(changed.httpShouldHandleCookies == false)
    }

    @Test(
        "addURLParams keeps the existing query text and appends sorted, strictly encoded items",
        arguments: [
            ("https://h/x", "https://h/x?c=3&d=a%26b%3Dc%20d"),
            ("https://h/x?", "https://h/x?c=3&d=a%26b%3Dc%20d"),
            ("https://h/x?a=1&b=x%20y", "https://h/x?a=1&b=x%20y&c=3&d=a%26b%3Dc%20d"),
            ("https://h/x?a=1&", "https://h/x?a=1&c=3&d=a%26b%3Dc%20d"),
            ("https://h/x?q=a+b&flag", "https://h/x?q=a+b&flag&c=3&d=a%26b%3Dc%20d"),
            ("https://h/x?c=old#frag", "https://h/x?c=old&c=3&d=a%26b%3Dc%20d#frag"),
        ])
    func addURLParamsMerges(url: String, expected: String) throws {
        let merged = addURLParams(["d": "a&b=c d", "c": "3"])(try request(url))
        #expect(merged.url?.absoluteString == expected)
    }

    @Test("addURLParams encodes everything but unreserved characters, in names too")
    func addURLParamsEncoding() throws {
        let merged = addURLParams(["näme+1": "é/?#[]@!$'()*,;:~-._ +"])(try request("https://h/x"))
        #expect(
            merged.url?.absoluteString
                == "https://h/x?n%C3%A4me%2B1=%C3%A9%2F%3F%23%5B%5D%40%21%24%27%28%29%2A%2C%3B%3A~-._%20%2B")
        #expect(merged.url?.fragment == nil)
    }

    @Test("addURLParams leaves the request alone when it has nothing to add or no URL")
    func addURLParamsNoOp() throws {
        let base = try request("https://h/x?a=1")
        #expect(addURLParams([:])(base) == base)
        var noURL = base
        noURL.url = nil
        #expect(addURLParams(["a": "1"])(noURL).url == nil)
    }

    @Test("addURLParams keeps the rest of the request")
    func addURLParamsKeepsRequest() throws {
        var base = try request("https://h/x")
        base.httpMethod = "POST"
        base.setValue("v", forHTTPHeaderField: "X-Keep")
        let merged = addURLParams(["a": "1"])(base)
        #expect(merged.httpMethod == "POST")
        #expect(merged.value(forHTTPHeaderField: "X-Keep") == "v")
    }

    @Test("addHeaders sets values, replacing an existing value whatever its case")
    func addHeadersReplaces() throws {
        var base = try request("https://h/x")
        base.setValue("old", forHTTPHeaderField: "authorization")
        base.setValue("kept", forHTTPHeaderField: "X-Other")
        let changed = addHeaders(["Authorization": "Bearer new", "Accept": "application/json"])(base)
        #expect(changed.value(forHTTPHeaderField: "Authorization") == "Bearer new")
        #expect(changed.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(changed.value(forHTTPHeaderField: "X-Other") == "kept")
        #expect(changed.allHTTPHeaderFields?.count == 3)
        #expect(addHeaders([:])(base) == base)
    }

    @Test("Builders are Sendable values usable from many tasks at once")
    func concurrentUse() async throws {
        let builder = compose(addURLParams(["p": "1"]), addHeaders(["H": "v"]))
        let base = try request("https://h/x")
        let urls = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<50 { group.addTask { builder(base).url?.absoluteString } }
            return await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(urls == ["https://h/x?p=1"])
    }
}

/// `JustNetworkingError`'s equality and descriptions.
@Suite("JustNetworkingError")
struct JustNetworkingErrorTests {
    @Test("Descriptions say what happened and what to do, without the body's content")
    func descriptions() {
        #expect(
            JustNetworkingError.baseURLNotSet(router: "GET user/12").description
                == "No base URL is set for GET user/12: call NetworkConfiguration.setCurrentURL(_:) first, "
                + "or override the router's baseURL.")
        let status = JustNetworkingError.unacceptableStatusCode(
            statusCode: 404, headers: [:], body: Data("secret-token".utf8))
        #expect(status.description == "The server answered with HTTP status 404, outside 200–299 (body: 12 bytes).")
        #expect(JustNetworkingError.notHTTPResponse.description == "The response was not an HTTP response.")
    }

    @Test("Equality compares every associated value")
    func equality() {
        let error = JustNetworkingError.unacceptableStatusCode(statusCode: 500, headers: ["A": "1"], body: Data([1]))
        #expect(error == .unacceptableStatusCode(statusCode: 500, headers: ["A": "1"], body: Data([1])))
        #expect(error != .unacceptableStatusCode(statusCode: 500, headers: ["A": "1"], body: Data([2])))
        #expect(error != .unacceptableStatusCode(statusCode: 501, headers: ["A": "1"], body: Data([1])))
        #expect(JustNetworkingError.baseURLNotSet(router: "a") != .baseURLNotSet(router: "b"))
    }
}
