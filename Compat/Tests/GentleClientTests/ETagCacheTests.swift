import Foundation
import GentleNetworking
import Testing

#if COMPAT_SWIFT5
    @testable import GentleClient5
#else
    @testable import GentleClient
#endif

/// An origin of the test's own: a 200 with an ETag, then a 304 when the tag comes back.
struct ETagOrigin: HTTPTransportProtocol {
    let log = RecordingTransport.Log()

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        log.append(request)
        let url = request.url ?? URL(fileURLWithPath: "/")
        let matched = request.value(forHTTPHeaderField: "If-None-Match") == "\"v1\""
        let response = HTTPURLResponse(
            url: url, statusCode: matched ? 304 : 200, httpVersion: "HTTP/1.1",
            headerFields: ["ETag": "\"v1\"", "Content-Type": "application/json"])!
        return (matched ? Data() : Data(todosJSON.utf8), response)
    }
}

@Suite struct ETagCacheTests {
    @Test func ownStoreServesTheNotModifiedAnswer() async throws {
        let origin = ETagOrigin()
        let store = BoundedETagStore(limit: 2)
        let transport = ETagTransport(inner: origin, store: store)
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let endpoint = Endpoint(path: "/todos", method: .get)
        let first: [Todo] = try await service.requestModels(to: endpoint, via: productionEnvironment)
        let second: [Todo] = try await service.requestModels(to: endpoint, via: productionEnvironment)
        #expect(first.count == 2)
        #expect(second.map(\.title) == first.map(\.title))
        #expect(origin.log.all.map { $0.value(forHTTPHeaderField: "If-None-Match") } == [nil, "\"v1\""])
        #expect(await store.summary() == ["\"v1\" 200 \(todosJSON.utf8.count) bytes"])
    }

    @Test func entriesAreMadeFromResponses() throws {
        let response = HTTPURLResponse(
            url: URL(string: "https://api.example.com/v1/todos")!, statusCode: 200, httpVersion: nil,
            headerFields: ["ETag": "\"x\""])!
        let entry = ETagCacheEntry(etag: "\"x\"", data: Data("[]".utf8), response: response)
        #expect(entry.etag == "\"x\"")
        #expect(entry.data == Data("[]".utf8))
        #expect(entry.response.statusCode == 200)
        #expect(entry.response.url?.host == "api.example.com")
    }
}
