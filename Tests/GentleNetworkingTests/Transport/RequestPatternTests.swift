import Foundation
import GentleNetworking
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("RequestPattern")
struct RequestPatternTests {
    func request(_ method: String?, _ url: String) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        return request
    }

    @Test("A nil method matches every method; a given one only itself")
    func optionalMethod() {
        let any = RequestPattern(pathRegex: "^/a$")
        #expect(any.method == nil)
        for method in ["GET", "POST", "DELETE", "patch"] {
            #expect(any.matches(request(method, "https://h/a")))
        }
        let post = RequestPattern(method: .post, path: "/a")
        #expect(post.matches(request("post", "https://h/a")))
        #expect(!post.matches(request("GET", "https://h/a")))
        #expect(RequestPattern(method: .get, path: "/a").matches(request(nil, "https://h/a")), "no method is GET")
    }

    @Test("Literal host and path are escaped: regex characters are plain text")
    func literalsAreEscaped() {
        let pattern = RequestPattern(host: "api.example.com", path: "/v1/items(1).json")
        #expect(pattern.matches(request("GET", "https://API.example.com/v1/items(1).json")))
        #expect(!pattern.matches(request("GET", "https://apiXexample.com/v1/items(1).json")), "the dot is literal")
        #expect(!pattern.matches(request("GET", "https://api.example.com/v1/items1.json")))
        #expect(!pattern.matches(request("GET", "https://sub.api.example.com/v1/items(1).json")), "whole host")
        // The regex forms match exactly what the literals match.
        let asRegex = RequestPattern(hostRegex: pattern.hostRegex, pathRegex: pattern.pathRegex)
        #expect(asRegex.matches(request("GET", "https://api.example.com/v1/items(1).json")))
        #expect(!asRegex.matches(request("GET", "https://apiXexample.com/v1/items(1).json")))
        #expect(!asRegex.matches(request("GET", "https://api.example.com/v1/items1.json")))
        #expect(!asRegex.matches(request("GET", "https://api.example.com/v1/items(1).json/more")))
        #expect(RequestPattern(path: "/a").hostRegex == nil)
    }

    @Test("Host and path regexes; the host is case-insensitive, the query is not part of the path")
    func regexes() {
        let pattern = RequestPattern(method: .get, hostRegex: #"^cdn\d\.example$"#, pathRegex: #"^/img/\d+\.png$"#)
        #expect(pattern.matches(request("GET", "https://CDN3.example/img/42.png?size=2")))
        #expect(!pattern.matches(request("GET", "https://cdn.example/img/42.png")))
        #expect(!pattern.matches(request("GET", "https://cdn3.example/img/x.png")))
        #expect(pattern.hostRegex == #"^cdn\d\.example$"#)
        #expect(RequestPattern(pathRegex: "/users/").matches(request("GET", "https://h/v2/users/1")), "unanchored")
    }

    @Test("An invalid regex matches nothing, and says so")
    func invalidRegex() {
        let bad = RequestPattern(pathRegex: "([")
        #expect(bad.hasInvalidRegex)
        #expect(!bad.matches(request("GET", "https://h/([")))
        let badHost = RequestPattern(hostRegex: "*", pathRegex: ".*")
        #expect(badHost.hasInvalidRegex)
        #expect(!badHost.matches(request("GET", "https://h/")))
        #expect(!RequestPattern(path: "([").hasInvalidRegex, "a literal is always valid")
        #expect(RequestPattern(path: "/([").matches(request("GET", "https://h/(%5B")))
    }

    @Test("Hashable: equal patterns are one set element")
    func hashable() {
        let patterns: Set<RequestPattern> = [
            RequestPattern(method: .get, path: "/a"), RequestPattern(method: .get, path: "/a"),
            RequestPattern(path: "/a"), RequestPattern(pathRegex: "^/a$"),
        ]
        #expect(patterns.count == 3)
    }
}
