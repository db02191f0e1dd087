import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pieces of a revalidation that run on every conditional GET: the key, the renewal of an
/// entry by a 304, and the store's in-place replacement.
@Suite("ETagTransport: the revalidation path's pieces")
struct ETagRevalidationPathTests {
    let url = URL(string: "https://api.example.com/items?page=2")!

    @Test("The key's format is stable: entries stored by earlier versions stay valid")
    func keyFormat() {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        #expect(
            ETagTransport.cacheKey(for: request)
                == "GET https://api.example.com/items?page=2 accept:application/json anonymous")
        request.setValue("Bearer t", forHTTPHeaderField: "authorization")
        #expect(
            ETagTransport.cacheKey(for: request)
                == "GET https://api.example.com/items?page=2 accept:application/json auth:"
                + SHA256Digest.hexHash("Bearer t"))
        var head = URLRequest(url: url)
        head.httpMethod = "head"
        #expect(ETagTransport.cacheKey(for: head).hasPrefix("HEAD https://api.example.com/items?page=2 accept: "))
    }

    @Test("Only a GET without the caller's own If-None-Match is made conditional")
    func revalidationKey() {
        let transport = ETagTransport(inner: FailingTestTransport())
        var request = URLRequest(url: url)
        #expect(transport.revalidationKey(for: request) == transport.cacheKey(for: request))
        request.httpMethod = "get"
        #expect(transport.revalidationKey(for: request) == transport.cacheKey(for: URLRequest(url: url)))
        request.httpMethod = "POST"
        #expect(transport.revalidationKey(for: request) == nil)
        var conditional = URLRequest(url: url)
        conditional.setValue("\"mine\"", forHTTPHeaderField: "if-none-match")
        #expect(transport.revalidationKey(for: conditional) == nil)
    }

    @Test("A 304 renews fields in any case, never its framing fields or cookies, and the ETag")
    func renewal() {
        let cached = CachedResponse(
            body: Data("body".utf8), statusCode: 200,
            headers: [
                "ETag": "\"1\"", "Date": "old", "Content-Length": "4", "Cache-Control": "max-age=60",
                "Content-Type": "application/json",
            ],
            url: url, etag: "\"1\"", storedAt: Date(timeIntervalSince1970: 0))
        let renewed = ETagTransport.revalidate(
            cached,
            withHeaders: [
                "etag": "\"2\"", "Date": "new", "Content-Length": "0", "content-encoding": "gzip",
                "Connection": "close", "Set-Cookie": "sid=1", "set-cookie2": "x=1", "X-New": "yes",
                "Cache-Control": "max-age=60",
            ])
        #expect(
            renewed.headers == [
                "etag": "\"2\"", "Date": "new", "Content-Length": "4", "Cache-Control": "max-age=60",
                "Content-Type": "application/json", "X-New": "yes",
            ])
        #expect(renewed.etag == "\"2\"")
        #expect(renewed.body == cached.body)
        #expect(renewed.storedAt > cached.storedAt)
    }

    @Test("A 304 cannot grow an existing field past the head's byte limit either")
    func replacementsBounded() {
        var headers = ["ETag": "\"1\""]
        for index in 0..<200 { headers["X-F\(index)"] = "v" }
        let cached = CachedResponse(
            body: Data(), statusCode: 200, headers: headers, url: url, etag: "\"1\"",
            storedAt: Date(timeIntervalSince1970: 0))
        // Each 304 makes 100 of the existing fields 4 KiB long: 400 KiB in all, past 256 KiB.
        var entry = cached
        for round in 0..<2 {
            let fields = (0..<100).map { ("X-F\(round * 100 + $0)", String(repeating: "w", count: 4_096)) }
            entry = ETagTransport.revalidate(entry, withFields: fields)
        }
        let bytes = entry.headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
        #expect(bytes <= 256 * 1024, "\(bytes) bytes")
        #expect(entry.headers.count == 201)
        #expect(entry.headers["X-F0"]?.count == 4_096, "replacements within the limit are still made")
    }

    @Test("A 304's fields as received: repeats merge under the first spelling, short and long heads alike")
    func renewalFromReceivedFields() {
        let cached = CachedResponse(
            body: Data(), statusCode: 200, headers: ["ETag": "\"1\"", "Cache-Control": "max-age=1"], url: url,
            etag: "\"1\"", storedAt: Date(timeIntervalSince1970: 0))
        let fields = [
            ("cache-control", "private"), ("ETag", "\"2\""), ("", "nameless"), ("Cache-Control", "max-age=5"),
            ("Set-Cookie", "a=1"), ("set-cookie", "b=2"),
        ]
        let expected = ["ETag": "\"2\"", "cache-control": "private, max-age=5"]
        #expect(ETagTransport.revalidate(cached, withFields: fields).headers == expected)
        // Past 32 fields the head is merged through a dictionary first: the same entry.
        let padding = (0..<40).map { ("X-Pad", "\($0)") }
        let long = ETagTransport.revalidate(cached, withFields: fields + padding)
        #expect(long.headers.filter { $0.key != "X-Pad" } == expected)
        #expect(long.headers["X-Pad"] == (0..<40).map { "\($0)" }.joined(separator: ", "))
        #expect(long.etag == "\"2\"")
    }

    @Test("The transport's lock-only path and the actor's methods share one consistent store")
    func lockPathAndActorAgree() async {
        let store = InMemoryETagStore(maxEntries: 16, maxBytes: 1 << 20)
        let template = CachedResponse(
            body: Data(count: 64), statusCode: 200, headers: ["ETag": "\"e\""], url: url, etag: "\"e\"",
            storedAt: Date())
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for step in 0..<300 {
                        let key = "k\((task * 7 + step) % 40)"
                        switch step % 4 {
                        case 0: store.put(template, for: key)
                        case 1: await store.store(template, for: key)
                        case 2: _ = store.entry(for: key)
                        default: if step % 8 == 3 { store.drop(for: key) } else { await store.remove(for: key) }
                        }
                    }
                }
            }
        }
        let count = await store.count
        #expect(count <= 16)
        #expect(await store.byteCount == count * template.approximateSize)
        store.put(template, for: "last")
        #expect(await store.cachedResponse(for: "last") == template)
    }

    @Test("Replacing an entry keeps the byte count exact; an oversized replacement drops the entry")
    func inPlaceReplacement() async {
        func entry(_ body: Int) -> CachedResponse {
            CachedResponse(
                body: Data(count: body), statusCode: 200, headers: ["ETag": "\"e\""], url: url, etag: "\"e\"",
                storedAt: Date())
        }
        let store = InMemoryETagStore(maxEntries: 2, maxBytes: 4096)
        await store.store(entry(100), for: "a")
        await store.store(entry(1000), for: "a")
        #expect(await store.byteCount == entry(1000).approximateSize)
        await store.store(entry(10), for: "b")
        await store.store(entry(50), for: "a")
        #expect(await store.count == 2)
        #expect(await store.byteCount == entry(50).approximateSize + entry(10).approximateSize)
        // A renewed entry is the most recently used: a third key evicts the other one.
        await store.store(entry(20), for: "c")
        #expect(await store.cachedResponse(for: "b") == nil)
        #expect(await store.cachedResponse(for: "a")?.body.count == 50)
        await store.store(entry(5000), for: "a")
        #expect(await store.cachedResponse(for: "a") == nil)
        #expect(await store.byteCount == entry(20).approximateSize)
    }
}
