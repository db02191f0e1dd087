import Foundation
import Testing
import YNetwork

struct Probe: NetworkRequest {
    var path: PathRepresentable
    var basePath: PathRepresentable? = nil
    var queryParameters: ParametersBuilder? { parameters }
    var requestType: RequestContentType = .JSON
    var parameters: Parameters? = nil
}

@Suite("URLBuilder: paths, bases and queries as Y-Network builds them")
struct URLBuilderTests {
    let configuration = NetworkManagerConfiguration(basePath: "https://api.example.com/v1")

    func url(_ probe: Probe, configuration: NetworkManagerConfiguration? = nil) throws -> String {
        try URLBuilder().url(for: probe, configuration: configuration ?? self.configuration).absoluteString
    }

    @Test("An absolute path is used as it is, whatever the base paths")
    func absolutePath() throws {
        #expect(
            try url(Probe(path: "https://other.example/x?y=1", basePath: "https://ignored"))
                == "https://other.example/x?y=1")
        #expect(try url(Probe(path: "HTTP://upper.example/a")) == "HTTP://upper.example/a")
    }

    @Test("Query parameters go before an absolute path's fragment, where they are sent")
    func queryBeforeFragment() throws {
        #expect(
            try url(Probe(path: "https://other.example/x#s", parameters: ["a": "1"]))
                == "https://other.example/x?a=1#s")
        #expect(
            try url(Probe(path: "https://other.example/x?y=1#s", parameters: ["a": "1"]))
                == "https://other.example/x?y=1&a=1#s")
    }

    @Test(
        "Base and path are joined with exactly one slash",
        arguments: [
            ("https://h.example/v1", "users"), ("https://h.example/v1/", "users"), ("https://h.example/v1", "/users"),
            ("https://h.example/v1/", "/users"), ("https://h.example/v1//", "//users"),
        ])
    func singleSlash(base: String, path: String) throws {
        #expect(try url(Probe(path: path, basePath: base)) == "https://h.example/v1/users")
    }

    @Test("The request's base path wins over the configuration's; the configuration's is the fallback")
    func basePrecedence() throws {
        #expect(try url(Probe(path: "a", basePath: "https://mine.example")) == "https://mine.example/a")
        #expect(try url(Probe(path: "a")) == "https://api.example.com/v1/a")
    }

    @Test("A relative path with no base anywhere is NetworkError.noBasePath")
    func noBasePath() {
        #expect(throws: YNetwork.NetworkError.noBasePath) {
            try URLBuilder().url(for: Probe(path: "users"), configuration: NetworkManagerConfiguration())
        }
        #expect(throws: YNetwork.NetworkError.noBasePath) {
            try URLBuilder().url(for: Probe(path: "users"), configuration: nil)
        }
    }

    @Test("Text that is not an http(s) URL is NetworkError.invalidURL, not a crash")
    func invalidURL() {
        #expect(throws: YNetwork.NetworkError.invalidURL) {
            try URLBuilder().url(for: Probe(path: "x", basePath: "not a url"), configuration: nil)
        }
        #expect(throws: YNetwork.NetworkError.invalidURL) {
            try URLBuilder().url(for: Probe(path: "x", basePath: "ftp://files.example"), configuration: nil)
        }
    }

    @Test("Characters a path cannot hold are percent-encoded; existing escapes are kept")
    func pathEncoding() throws {
        #expect(
            try url(Probe(path: "users/Ada Lovelace/ü")) == "https://api.example.com/v1/users/Ada%20Lovelace/%C3%BC")
        #expect(try url(Probe(path: "users/a%2Fb")) == "https://api.example.com/v1/users/a%2Fb")
    }

    @Test("Query: sorted by key, encoded, true as a bare key, false and nil left out, arrays repeated in order")
    func query() throws {
        let missing: String? = nil
        let probe = Probe(
            path: "search",
            parameters: [
                "q": "fish & chips", "page": 2, "debug": true, "hidden": false, "none": missing,
                "tag": ["b", "a"], "ratio": 0.5,
            ])
        #expect(
            try url(probe)
                == "https://api.example.com/v1/search?debug&page=2&q=fish%20%26%20chips&ratio=0.5&tag=b&tag=a")
    }

    @Test("An empty key with true is an empty pair: left out, with no stray & (fuzz finding)")
    func emptyBareKey() throws {
        #expect(try url(Probe(path: "p", parameters: ["": true, "b": "1"])) == "https://api.example.com/v1/p?b=1")
        #expect(try url(Probe(path: "p", parameters: ["": true])) == "https://api.example.com/v1/p")
        #expect(try url(Probe(path: "p", parameters: ["": "x"])) == "https://api.example.com/v1/p?=x")
    }

    @Test("An integer 1 or 0 is a number, never a boolean")
    func integersAreNotBooleans() throws {
        #expect(
            try url(Probe(path: "p", parameters: ["one": 1, "zero": 0])) == "https://api.example.com/v1/p?one=1&zero=0")
    }

    @Test("A Date that is not finite (NaN, infinity) is written as its interval, never a trap")
    func nonFiniteDate() throws {
        let probe = Probe(path: "p", parameters: ["d": Date(timeIntervalSinceReferenceDate: .nan)])
        #expect(try url(probe) == "https://api.example.com/v1/p?d=nan")
        let infinite = Probe(path: "p", parameters: ["d": Date(timeIntervalSinceReferenceDate: .infinity)])
        #expect(try url(infinite) == "https://api.example.com/v1/p?d=inf")
    }

    @Test("A relative path's fragment is dropped with all after it, wherever its '#' is")
    func relativeFragment() throws {
        let base = "https://api.example.com/v1"
        #expect(try url(Probe(path: "users#frag", basePath: base)) == "https://api.example.com/v1/users")
        #expect(try url(Probe(path: "users#a?b=1", basePath: base)) == "https://api.example.com/v1/users")
        #expect(try url(Probe(path: "users/#top", basePath: base)) == "https://api.example.com/v1/users/")
        #expect(try url(Probe(path: "#only", basePath: base)) == "https://api.example.com/v1/")
        #expect(
            try url(Probe(path: "users?x=1#f", basePath: base, parameters: ["y": "2"]))
                == "https://api.example.com/v1/users?x=1&y=2")
    }

    @Test("A path that already has a query gets the parameters after &")
    func existingQuery() throws {
        #expect(try url(Probe(path: "p?x=1", parameters: ["y": "2"])) == "https://api.example.com/v1/p?x=1&y=2")
    }

    @Test("A base with a query keeps it after the joined path, ahead of the path's and the parameters'")
    func baseWithQuery() throws {
        let base = "https://h.example/v1/?key=K#frag"
        #expect(try url(Probe(path: "users", basePath: base)) == "https://h.example/v1/users?key=K")
        #expect(try url(Probe(path: "users?x=1", basePath: base)) == "https://h.example/v1/users?key=K&x=1")
        #expect(
            try url(Probe(path: "/users", basePath: base, parameters: ["y": "2"]))
                == "https://h.example/v1/users?key=K&y=2")
        #expect(try url(Probe(path: "", basePath: base)) == "https://h.example/v1/?key=K")
        #expect(try url(Probe(path: "users", basePath: "https://h.example/v1#f")) == "https://h.example/v1/users")
        // Without a query in the base, a path that is only a query keeps its slash, as before.
        #expect(try url(Probe(path: "?x=1", basePath: "https://h.example/v1")) == "https://h.example/v1/?x=1")
        // An empty path is the base and one `/`, as Y-Network joins them.
        for path in ["", "/", "//"] {
            #expect(try url(Probe(path: path, basePath: "https://h.example/v1")) == "https://h.example/v1/")
            #expect(try url(Probe(path: path, basePath: "https://h.example/v1/")) == "https://h.example/v1/")
            #expect(
                try url(Probe(path: path, basePath: "https://h.example/v1", parameters: ["y": "2"]))
                    == "https://h.example/v1/?y=2")
        }
    }

    @Test("With a .formURLEncoded request type, spaces in the query are +")
    func formSpaces() throws {
        let probe = Probe(path: "p", requestType: .formURLEncoded, parameters: ["q": "a b+c"])
        #expect(try url(probe) == "https://api.example.com/v1/p?q=a+b%2Bc")
    }

    @Test("PathRepresentable: String and String-backed enums")
    func pathRepresentable() {
        enum Paths: String, PathRepresentable { case users = "v2/users" }
        #expect(Paths.users.pathValue == "v2/users")
        #expect("x".pathValue == "x")
    }
}
