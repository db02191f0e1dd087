import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@Suite("Building a URLRequest from an endpoint")
struct EndpointRequestBuilderTests {
    let builder = EndpointRequestBuilder()

    @Test("Joins the base URL and the path with exactly one slash")
    func joinsPaths() throws {
        for (base, path) in [
            ("https://api.example.com", "/api/models"), ("https://api.example.com/", "/api/models"),
            ("https://api.example.com/", "api/models"), ("https://api.example.com", "api/models"),
        ] {
            let request = try builder.makeRequest(
                for: Endpoint(path: path, method: .get), in: DefaultAPIEnvironment(baseURL: URL(string: base)))
            #expect(request.url?.absoluteString == "https://api.example.com/api/models")
        }
        let versioned = try builder.makeRequest(
            for: Endpoint(path: "/users", method: .get),
            in: DefaultAPIEnvironment(baseURL: URL(string: "https://h.example/v2/")))
        #expect(versioned.url?.absoluteString == "https://h.example/v2/users")
    }

    @Test("Percent-encodes +, &, =, spaces and non-ASCII in query names and values")
    func encodesQueryStrictly() throws {
        let endpoint = Endpoint(
            path: "/search", method: .get,
            query: [
                URLQueryItem(name: "q", value: "a+b & c=d"), URLQueryItem(name: "city", value: "Zürich 東京"),
                URLQueryItem(name: "flag", value: nil), URLQueryItem(name: "k&y", value: "v"),
            ])
        let request = try builder.makeRequest(
            for: endpoint, in: DefaultAPIEnvironment(baseURL: URL(string: "https://h.example?key=1")))
        #expect(
            request.url?.absoluteString
                == "https://h.example/search?key=1&q=a%2Bb%20%26%20c%3Dd&city=Z%C3%BCrich%20%E6%9D%B1%E4%BA%AC&flag&k%26y=v"
        )
    }

    @Test("A '.' or '..' segment (also as %2E) is .invalidURL: a value put into a path cannot leave the base path")
    func dotSegmentsRefused() throws {
        let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://gw.example/tenant-a/v1"))
        for path in [
            "files/../../tenant-b/admin", "/files/..", "./x", "a/%2e%2e/b", "a/%2E./b", "a/.%2E", "a/%2e/b", "..",
            "files/..%2F..%2Fadmin", "files/..%5Cadmin", "files/..\\admin", "files/..;/admin", "a/%2e%2E%2fb",
        ] {
            do {
                let request = try builder.makeRequest(for: Endpoint(path: path, method: .get), in: environment)
                Issue.record("\(path) built \(request.url?.absoluteString ?? "-")")
            } catch {
                #expect(error.kind == .invalidURL, "\(path)")
            }
        }
        // Dots inside a segment are ordinary: file names, versions, hidden files.
        for path in [
            "files/report.v2.pdf", "a/...", "a/.well-known/x", "a/..b", "v1.2/x", "a;v=1/x", "100%25/x", "%41",
        ] {
            let request = try builder.makeRequest(for: Endpoint(path: path, method: .get), in: environment)
            #expect(request.url?.path.hasPrefix("/tenant-a/v1/") == true, "\(path)")
        }
    }

    @Test("On the wire: a path with '..' sends nothing, with the credential or without")
    func dotSegmentsNotSent() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let service = HTTPNetworkService(transport: URLSessionTransport(), authService: InMemoryAuthService(token: "t"))
        let environment = DefaultAPIEnvironment(baseURL: server.url("/tenant-a/v1"))
        do {
            try await service.requestVoid(
                to: Endpoint(path: "files/../../tenant-b/admin", method: .get, requiresAuth: true), via: environment)
            Issue.record("no error")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidURL)
        }
        #expect(server.receivedRequests.isEmpty)
    }

    @Test("Encodes path characters that are not allowed, but keeps existing escapes")
    func encodesPath() throws {
        let request = try builder.makeRequest(
            for: Endpoint(path: "/files/my file/ü/100%25/50%", method: .get),
            in: DefaultAPIEnvironment(baseURL: URL(string: "https://h.example")))
        #expect(request.url?.absoluteString == "https://h.example/files/my%20file/%C3%BC/100%25/50%25")
    }

    @Test("Sets Accept always and Content-Type only with a body")
    func setsDefaultHeaders() throws {
        let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://h.example"))
        let get = try builder.makeRequest(for: Endpoint(path: "/a", method: .get), in: environment)
        #expect(get.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(get.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(get.httpBody == nil)

        let post = try builder.makeRequest(
            for: Endpoint(path: "/a", method: .post, body: ["n": EndpointAnyEncodable(1)]), in: environment)
        #expect(post.httpMethod == "POST")
        #expect(post.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let json = try JSONSerialization.jsonObject(with: try #require(post.httpBody)) as? [String: Int]
        #expect(json == ["n": 1])
    }

    @Test("Endpoint headers override defaults and a timeout is applied")
    func appliesEndpointHeadersAndTimeout() throws {
        let request = try builder.makeRequest(
            for: Endpoint(
                path: "/a", method: .get, headers: ["Accept": "text/csv", "X-Trace": "1"], timeoutInterval: 7),
            in: DefaultAPIEnvironment(baseURL: URL(string: "https://h.example")))
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/csv")
        #expect(request.value(forHTTPHeaderField: "X-Trace") == "1")
        #expect(request.timeoutInterval == 7)
    }

    @Test("A missing base URL is a typed error, not a crash")
    func missingBaseURL() {
        #expect {
            try builder.makeRequest(for: Endpoint(path: "/a", method: .get), in: DefaultAPIEnvironment())
        } throws: { error in
            (error as? NetworkError)?.kind == .missingBaseURL
        }
    }

    @Test("A relative base URL is a typed error")
    func relativeBaseURL() {
        #expect {
            try builder.makeRequest(
                for: Endpoint(path: "/a", method: .get), in: DefaultAPIEnvironment(baseURL: URL(string: "just/a/path")))
        } throws: { error in
            (error as? NetworkError)?.kind == .invalidURL
        }
    }

    @Test(
        "A base URL without a host is a typed error",
        arguments: ["http://", "http://user@", "http://:8080/api", "http://[]:80"])
    func baseURLWithoutHost(base: String) throws {
        let url = try #require(URL(string: base))
        #expect {
            try builder.makeRequest(for: Endpoint(path: "/a", method: .get), in: DefaultAPIEnvironment(baseURL: url))
        } throws: { error in
            (error as? NetworkError)?.kind == .invalidURL
        }
    }

    @Test(
        "Hosts with user info, ports and IPv6 literals are kept as they are",
        arguments: [
            ("https://user:pw@h.example:8443/v1", "https://user:pw@h.example:8443/v1/a"),
            ("http://[::1]:8080", "http://[::1]:8080/a"), ("http://127.0.0.1:9/x/", "http://127.0.0.1:9/x/a"),
        ])
    func authorities(base: String, expected: String) throws {
        let request = try builder.makeRequest(
            for: Endpoint(path: "/a", method: .get), in: DefaultAPIEnvironment(baseURL: URL(string: base)))
        #expect(request.url?.absoluteString == expected)
        #expect(request.httpMethod == "GET")
    }

    @Test(
        "A base URL's query is kept before the endpoint's, its fragment is dropped",
        arguments: [
            ("https://h.example/v1?key=k#frag", "https://h.example/v1/a?key=k&n=1"),
            ("https://h.example?key=k", "https://h.example/a?key=k&n=1"),
            ("https://h.example/v1/#top", "https://h.example/v1/a?n=1"),
            ("https://h.example/v1?", "https://h.example/v1/a?n=1"),
            ("http://u@[::1]:8/p?x=a:b/c", "http://u@[::1]:8/p/a?x=a:b/c&n=1"),
        ])
    func baseQueryAndFragment(base: String, expected: String) throws {
        let request = try builder.makeRequest(
            for: Endpoint(path: "/a", method: .get, query: [URLQueryItem(name: "n", value: "1")]),
            in: DefaultAPIEnvironment(baseURL: URL(string: base)))
        #expect(request.url?.absoluteString == expected)
    }

    @Test("The default fields are the same request as setValue would build, and endpoint headers still win")
    func defaultFieldsMatchSetValue() throws {
        let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://h.example"))
        let get = try builder.makeRequest(for: Endpoint(path: "/a", method: .get), in: environment)
        var expected = URLRequest(url: try #require(URL(string: "https://h.example/a")))
        expected.setValue("application/json", forHTTPHeaderField: "Accept")
        #expect(get == expected)
        #expect(get.allHTTPHeaderFields == ["Accept": "application/json"])
        let post = try builder.makeRequest(
            for: Endpoint(
                path: "/a", method: .post, body: ["n": EndpointAnyEncodable(1)],
                headers: ["accept": "text/csv", "content-type": "application/x-ndjson"]),
            in: environment)
        #expect(post.value(forHTTPHeaderField: "Accept") == "text/csv")
        #expect(post.value(forHTTPHeaderField: "Content-Type") == "application/x-ndjson")
        #expect(post.allHTTPHeaderFields?.count == 2)
    }

    @Test("A body that cannot be encoded is a typed error naming the endpoint")
    func unencodableBody() {
        let endpoint = Endpoint(path: "/a", method: .post, body: ["x": EndpointAnyEncodable(Double.nan)])
        #expect {
            try builder.makeRequest(for: endpoint, in: DefaultAPIEnvironment(baseURL: URL(string: "https://h.example")))
        } throws: { error in
            guard let error = error as? NetworkError else { return false }
            return error.kind == .encodingFailed && error.message.contains("POST /a")
                && error.underlyingError is EncodingError
        }
    }

    @Test("HTTP methods: raw values and idempotency")
    func methods() {
        #expect(HTTPMethod.allCases.map(\.rawValue) == ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
        #expect(HTTPMethod.allCases.filter(\.isIdempotent) == [.get, .put, .delete, .head, .options])
    }
}
