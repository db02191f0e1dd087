import Foundation
import GentleNetworkingTesting
import Testing
import YNetwork

/// A request type that stores its parameters: it must be `Sendable` in Swift 6 mode.
private struct Search: NetworkRequest, Sendable {
    let query: ParametersBuilder
    let form: ParametersBuilder?
    var path: PathRepresentable { "search" }
    var method: HttpMethod { form == nil ? .GET : .POST }
    var requestType: RequestContentType { form == nil ? .JSON : .formURLEncoded }
    var responseType: ResponseContentType { .none }
    var queryParameters: ParametersBuilder? { query }
    var body: BodyBuilder? { form.map { FormBody(parameters: $0.parameters) } }
}

/// A form body from stored parameters.
private struct FormBody: ParametersBuilder, Encodable, BodyBuilder {
    let parameters: Parameters
    func encode(to encoder: any Encoder) throws {}
}

/// A subclass that changes how queries are written.
private final class UppercasingBuilder: URLBuilder, @unchecked Sendable {
    override func queryString(with parameters: Parameters, contentType: RequestContentType) -> String {
        super.queryString(with: parameters, contentType: contentType).uppercased()
    }
}

private struct QueryProbe: NetworkRequest {
    var path: PathRepresentable
    var queryParameters: ParametersBuilder? { ["q": "a b"] as Parameters }
}

@Suite("URL helpers: queryParameterString, open URLBuilder, Sendable parameters")
struct URLHelpersTests {
    /// Y-Network sorts the encoded `field=value` strings, not the keys: the two orders differ
    /// when a key is a prefix of another followed by a character below `=` (`-`, `.`, a space
    /// written `+` or `%20`). A caller matching URLs or form bodies exactly (stubs, signatures)
    /// sees Y-Network's order.
    @Test("Query and form pairs come out in Y-Network's order: the encoded pairs sorted as text")
    func pairOrder() {
        let parameters: Parameters = [
            "a": "1", "a-b": "2", "a b": "3", "a.b": "4", "a_b": "5", "ab": "6", "A": "7", "a=": "8", "flag": true,
        ]
        for plus in [false, true] {
            // Y-Network's rule, written out: every pair encoded, then the strings sorted.
            let expected = parameters.compactMap { key, value -> String? in
                let name = FormURLEncoder.encode([key: true], spaceAsPlus: plus)
                if let flag = value as? Bool { return flag ? name : nil }
                return FormURLEncoder.encode([key: value], spaceAsPlus: plus)
            }.sorted().joined(separator: "&")
            #expect(FormURLEncoder.encode(parameters, spaceAsPlus: plus) == expected)
            #expect(
                URLBuilder().queryString(with: parameters, contentType: plus ? .formURLEncoded : .JSON) == expected)
        }
        #expect(URLBuilder().queryString(with: ["a": "1", "a-b": "2"], contentType: .JSON) == "a-b=2&a=1")
        #expect(FormURLEncoder.encode(["a b": "1", "a": "2"], spaceAsPlus: true) == "a+b=1&a=2")
        // An array's pairs stay together, in the array's order.
        #expect(FormURLEncoder.encode(["b": ["2", "1"], "a": "x"], spaceAsPlus: true) == "a=x&b=2&b=1")
    }

    @Test("queryParameterString encodes one pair as a query does; true is a bare key, false and nil nothing")
    func singlePair() {
        let builder = URLBuilder()
        #expect(
            builder.queryParameterString(field: "first name", value: "John Doe", contentType: .JSON)
                == "first%20name=John%20Doe")
        #expect(
            builder.queryParameterString(field: "first name", value: "John Doe", contentType: .formURLEncoded)
                == "first+name=John+Doe")
        #expect(builder.queryParameterString(field: "q", value: "a&b=c/d?", contentType: .JSON) == "q=a%26b%3Dc%2Fd%3F")
        #expect(builder.queryParameterString(field: "page", value: 3, contentType: .JSON) == "page=3")
        #expect(builder.queryParameterString(field: "fresh", value: true, contentType: .JSON) == "fresh")
        #expect(builder.queryParameterString(field: "stale", value: false, contentType: .JSON) == nil)
        #expect(builder.queryParameterString(field: "none", value: String?.none as Any, contentType: .JSON) == nil)
        #expect(builder.queryParameterString(field: "tag", value: ["x", "y"], contentType: .JSON) == "tag=x&tag=y")
    }

    @Test("URLBuilder is open: a subclass's override is used by url(for:configuration:)")
    func subclass() throws {
        let configuration = NetworkManagerConfiguration(basePath: "https://api.example.com")
        let url = try UppercasingBuilder().url(for: QueryProbe(path: "find"), configuration: configuration)
        #expect(url.absoluteString == "https://api.example.com/find?Q=A%20B")
    }

    @Test("An ftp:// path is absolute, as in Y-Network, but never sent: invalidURL")
    func ftpRefused() {
        let configuration = NetworkManagerConfiguration(basePath: "https://api.example.com")
        #expect(throws: NetworkError.invalidURL) {
            try URLBuilder().url(for: QueryProbe(path: "ftp://files.example.com/a"), configuration: configuration)
        }
        #expect(throws: NetworkError.invalidURL) {
            try URLBuilder().url(for: QueryProbe(path: "ftps://files.example.com/a"), configuration: configuration)
        }
    }

    @Test("Stored parameters (a Sendable request type) reach the server as query and form body")
    func storedParametersOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route(nil, "/search") { _ in .status(204) }
        let manager = makeManager(server: server)
        let tags: [String] = ["a b", "c"]
        let request = Search(query: ["q": "fish & chips", "page": 2, "tags": tags, "debug": true], form: nil)
        let _: EmptyNetworkResponse = try await manager.submit(request)
        let posted = Search(query: [:] as Parameters, form: ["user": "ada lovelace", "admin": false] as Parameters)
        let _: EmptyNetworkResponse = try await manager.submit(posted)

        let received = server.requests(path: "/search")
        #expect(received.count == 2)
        #expect(received.first?.rawQuery == "debug&page=2&q=fish%20%26%20chips&tags=a%20b&tags=c")
        #expect(received.last?.bodyText == "user=ada+lovelace")
        #expect(received.last?.header("Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }
}
