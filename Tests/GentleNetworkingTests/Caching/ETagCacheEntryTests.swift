import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A store written the way a user of the original GentleNetworking writes one: its signatures
/// name `ETagCacheEntry`, its methods are an actor's synchronous ones, and it keeps entries as
/// given. It counts what it is asked.
actor OriginalShapeETagStore: ETagStoreProtocol {
    private var entries: [String: ETagCacheEntry] = [:]
    private(set) var stored: [ETagCacheEntry] = []
    private(set) var lookups = 0

    func cachedResponse(for key: String) -> ETagCacheEntry? {
        lookups += 1
        return entries[key]
    }

    func store(_ entry: ETagCacheEntry, for key: String) {
        stored.append(entry)
        entries[key] = entry
    }

    func remove(for key: String) { entries[key] = nil }

    func removeAll() { entries.removeAll() }

    var count: Int { entries.count }
}

@Suite("ETagCacheEntry: the original's store signatures")
struct ETagCacheEntryTests {
    @Test("A store written to the original's signatures revalidates on the wire, through CurlTransport")
    func originalShapeStoreOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let body = Locked(#"{"id":3,"property":"kept by the user's store"}"#)
        etagRoute(server, path: "/doc", body: body, extraHeaders: [("Set-Cookie", "sid=secret")])
        let store = OriginalShapeETagStore()
        let transport = ETagTransport(inner: try CurlTransport(), store: store)

        let (first, firstResponse) = try await transport.data(for: URLRequest(url: server.url("/doc")))
        let (second, secondResponse) = try await transport.data(for: URLRequest(url: server.url("/doc")))

        let seen = server.requests(path: "/doc")
        #expect(seen.count == 2)
        #expect(seen[0].header("If-None-Match") == nil)
        let etag = try #require(firstResponse.value(forHTTPHeaderField: "ETag"))
        #expect(seen[1].header("If-None-Match") == etag, "the tag the user's store kept went back")
        #expect(second == first, "the 304 was answered from the user's store")
        #expect(secondResponse.statusCode == 200)
        #expect(await store.count == 1)
        let entry = try #require(await store.stored.first)
        #expect(entry.etag == etag)
        #expect(entry.data == first)
        #expect(entry.response.statusCode == 200)
        #expect(entry.response.url == server.url("/doc"))
        #expect(entry.response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(entry.response.value(forHTTPHeaderField: "Set-Cookie") == nil, "no credential reaches a store")
    }

    @Test("ETagCacheEntry(etag:data:response:) keeps status, URL and headers, never a credential field")
    func entryFromResponse() throws {
        let url = try #require(URL(string: "https://api.example.com/items/1"))
        let response = try #require(
            HTTPURLResponse(
                url: url, statusCode: 203, httpVersion: "HTTP/1.1",
                headerFields: [
                    "ETag": "\"v1\"", "Content-Type": "application/json", "Set-Cookie": "sid=secret",
                    "Authorization": "Bearer echoed",
                ]))
        let entry = ETagCacheEntry(etag: "\"v1\"", data: Data("{}".utf8), response: response)
        #expect(entry.etag == "\"v1\"")
        #expect(entry.data == Data("{}".utf8))
        #expect(entry.body == entry.data)
        #expect(entry.statusCode == 203)
        #expect(entry.url == url)
        // Foundation may canonicalize a name's case (corelibs turns `ETag` into `Etag`).
        func field(_ name: String) -> String? { entry.headers.first { $0.key.lowercased() == name }?.value }
        #expect(field("content-type") == "application/json")
        #expect(field("etag") == "\"v1\"")
        #expect(entry.headers.keys.contains { $0.lowercased() == "set-cookie" } == false)
        #expect(entry.headers.keys.contains { $0.lowercased() == "authorization" } == false)

        let rebuilt = try #require(entry.response)
        #expect(rebuilt.statusCode == 203)
        #expect(rebuilt.url == url)
        #expect(rebuilt.value(forHTTPHeaderField: "content-type") == "application/json")
        #expect(rebuilt.value(forHTTPHeaderField: "Set-Cookie") == nil)
    }

    @Test("An entry made by hand without a URL still gives a response, for file:///")
    func entryWithoutURL() {
        let entry = CachedResponse(
            body: Data("x".utf8), statusCode: 204, headers: ["ETag": "\"a\""], url: nil, etag: "\"a\"",
            storedAt: Date(timeIntervalSince1970: 0))
        #expect(entry.response.statusCode == 204)
        #expect(entry.response.url == URL(fileURLWithPath: "/"))
        #expect(entry.response.value(forHTTPHeaderField: "ETag") == "\"a\"")
    }
}
