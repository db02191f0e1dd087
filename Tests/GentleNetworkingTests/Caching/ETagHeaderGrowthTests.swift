import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A 304 may add fields to the stored head (RFC 9111 §4.3.4), but a server adding new ones to
/// every 304 must not grow the entry past the limits any response has.
@Suite("ETagTransport: fields a 304 adds stay within the response limits")
struct ETagHeaderGrowthTests {
    @Test("Five 304s with 200 new fields each: the stored head keeps at most 256 fields", arguments: TransportKind.all)
    func addedFieldsBounded(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let round = Locked(0)
        server.route("GET", "/r") { request in
            guard request.header("If-None-Match") == "\"v1\"" else {
                return LoopbackResponse.json(#"{"id":1}"#).adding(header: "ETag", "\"v1\"")
            }
            let number = round.withLock { value -> Int in
                value += 1
                return value
            }
            var response = LoopbackResponse(status: 304, headers: [("ETag", "\"v1\"")])
            for index in 0..<200 { response.headers.append(("X-Junk-\(number)-\(index)", "v")) }
            return response
        }
        let store = InMemoryETagStore()
        let etag = ETagTransport(inner: try kind.make(), store: store)
        _ = try await etag.data(for: URLRequest(url: server.url("/r")))
        var last: HTTPURLResponse?
        for _ in 0..<5 {
            let (body, response) = try await etag.data(for: URLRequest(url: server.url("/r")))
            #expect(body == Data(#"{"id":1}"#.utf8))
            last = response
        }
        let fields = try #require(last).allHeaderFields.count
        #expect(fields <= 256, "\(fields) fields")
        #expect(fields >= 200, "new fields are still taken while there is room: \(fields)")
        #expect(server.requests(path: "/r").count == 6)
    }
}
