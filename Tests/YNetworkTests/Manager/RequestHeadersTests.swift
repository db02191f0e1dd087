import Foundation
import Testing

@testable import YNetwork

private struct Plain: NetworkRequest {
    var path: PathRepresentable { "/items" }
    var method: HttpMethod = .GET
    var body: BodyBuilder? = nil
    var headers: HttpHeaders? = nil
}

@Suite("The headers NetworkManager sets, as Y-Network sets them")
struct RequestHeadersTests {
    private let assembler = RequestAssembler(
        configuration: NetworkManagerConfiguration(basePath: "https://api.example.com"))

    @Test("A JSON request without a body gets no header at all: no Accept, no Content-Type")
    func noHeadersWithoutBody() throws {
        let built = try assembler.build(Plain())
        #expect(built.request.allHTTPHeaderFields ?? [:] == [:])
        #expect("\(request: built.request)" == "GET\thttps://api.example.com/items")
    }

    @Test("A body adds its Content-Type only; an Accept the request sets is kept")
    func bodyAndOwnAccept() throws {
        let built = try assembler.build(
            Plain(method: .POST, body: Data(#"{"a":1}"#.utf8), headers: ["Accept": "application/json"]))
        #expect(built.request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(built.request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(built.request.allHTTPHeaderFields?.count == 2)
    }
}
