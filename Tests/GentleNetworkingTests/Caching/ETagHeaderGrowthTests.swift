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

    @Test(
        "A 304 saying no-store that the full stored head cannot take still drops the entry: the next request is unconditional",
        arguments: TransportKind.all)
    func noStoreBeyondTheStoredHeadLimit(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let padding = Locked(0)
        server.route("GET", "/full") { request in
            guard request.header("If-None-Match") == "\"v1\"" else {
                // 200 KiB in four fields (libcurl takes at most 100 KiB in one).
                var response = LoopbackResponse.json(#"{"id":1}"#).adding(header: "ETag", "\"v1\"")
                for index in 0..<4 {
                    response.headers.append(("X-Fill-\(index)", String(repeating: "f", count: 50 << 10)))
                }
                return response
            }
            // The padding takes the stored head to its byte limit, so the `Cache-Control` after
            // it cannot be written into the entry (fields are renewed in the order received).
            return LoopbackResponse(
                status: 304,
                headers: [
                    ("ETag", "\"v1\""), ("X-Pad", String(repeating: "p", count: padding.current)),
                    ("Cache-Control", "no-store"),
                ])
        }
        let store = InMemoryETagStore()
        let etag = ETagTransport(inner: try kind.make(), store: store)
        let request = URLRequest(url: server.url("/full"))
        let key = try #require(etag.revalidationKey(for: request))
        _ = try await etag.deferredData(for: request)
        let stored = try #require(store.entry(for: key))
        let storedBytes = stored.headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
        padding.withLock {
            $0 = ETagTransport.storedHeaderLimits.maxHeaderBytes - storedBytes - ("X-Pad".utf8.count + 4)
        }
        #expect(padding.current > 0 && padding.current < 64 << 10, "\(padding.current)")

        let (body, _) = try await etag.deferredData(for: request)
        #expect(body == Data(#"{"id":1}"#.utf8), "the 304 answers this request")
        // Before: the renewed entry (without the `no-store` it had no room for) was stored, and
        // the next request revalidated it again.
        #expect(store.entry(for: key) == nil)
        _ = try await etag.deferredData(for: request)
        #expect(server.requests(path: "/full").map { $0.header("If-None-Match") } == [nil, "\"v1\"", nil])
    }
}
