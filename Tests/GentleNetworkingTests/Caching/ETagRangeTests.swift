import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A 206 is part of a representation: stored, a later plain GET's 304 was answered with the
/// part and status 206. A range request is the caller's exchange: not made conditional, never
/// answered from (or stored as) a whole entry.
@Suite("ETagTransport and ranges: a part is never stored, a range is never answered from the cache")
struct ETagRangeTests {
    private static let url = URL(string: "https://api.example.com/file")!

    private static func get(_ headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    @Test("A 206 to a range request is not stored: the next plain GET is not conditional and gets the whole body")
    func partNotStored() async throws {
        let inner = ScriptedTransport([
            .status(206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes 0-2/10"], body: "abc"),
            .status(200, headers: ["ETag": "\"v1\""], body: "abcdefghij"),
        ])
        let store = InMemoryETagStore()
        let etag = ETagTransport(inner: inner, store: store)
        _ = try await etag.data(for: Self.get(["Range": "bytes=0-2"]))
        let (body, response) = try await etag.data(for: Self.get())
        #expect(response.statusCode == 200)
        #expect(body == Data("abcdefghij".utf8))
        #expect(inner.sent.map { $0.value(forHTTPHeaderField: "If-None-Match") } == [nil, nil])
    }

    @Test("A range request is passed through untouched even with an entry: no If-None-Match, the entry kept")
    func rangeLeftAlone() async throws {
        let inner = ScriptedTransport([
            .status(200, headers: ["ETag": "\"v1\""], body: "abcdefghij"),
            .status(206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes 0-2/10"], body: "abc"),
            .status(206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes 0-2/10"], body: "abc"),
            .status(206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes 0-2/10"], body: "abc"),
            .status(304, headers: ["ETag": "\"v1\""]),
        ])
        let store = InMemoryETagStore()
        let etag = ETagTransport(inner: inner, store: store)
        _ = try await etag.data(for: Self.get())
        for header in ["Range", "If-Range", "range"] {
            let (part, partial) = try await etag.data(
                for: Self.get([header: header == "If-Range" ? "\"v1\"" : "bytes=0-2"]))
            #expect(partial.statusCode == 206)
            #expect(part == Data("abc".utf8))
        }
        let (body, response) = try await etag.data(for: Self.get())
        #expect(response.statusCode == 200)
        #expect(body == Data("abcdefghij".utf8))
        #expect(
            inner.sent.map { $0.value(forHTTPHeaderField: "If-None-Match") } == [nil, nil, nil, nil, "\"v1\""])
    }

    @Test(
        "The caller's own precondition is theirs: its 304 (or 412) comes back as it is, not .unexpectedNotModified",
        arguments: ["If-Modified-Since", "if-modified-since", "If-Match", "If-Unmodified-Since"])
    func callersPrecondition(header: String) async throws {
        let status =
            header.lowercased().hasSuffix("modified-since") && !header.lowercased().contains("unmodified")
            ? 304 : 412
        let inner = ScriptedTransport([
            .status(200, headers: ["ETag": "\"v1\""], body: "whole"),
            .status(status, headers: ["ETag": "\"v1\""]),
            .status(status, headers: ["ETag": "\"v1\""]),
        ])
        let store = InMemoryETagStore()
        let etag = ETagTransport(inner: inner, store: store)
        // With no entry, then with one: the caller's request goes out as it is, and its answer
        // comes back as it is (the entry is neither served nor replaced).
        let condition = header.lowercased().contains("match") ? "\"v1\"" : "Wed, 21 Oct 2015 07:28:00 GMT"
        let (_, first) = try await etag.data(for: Self.get([header: condition]))
        #expect(first.statusCode == 200)
        let (_, second) = try await etag.data(for: Self.get([header: condition]))
        #expect(second.statusCode == status)
        let (_, third) = try await etag.data(for: Self.get([header: condition]))
        #expect(third.statusCode == status)
        #expect(inner.sent.map { $0.value(forHTTPHeaderField: "If-None-Match") } == [nil, nil, nil])
    }

    @Test("Only 200, 203 and 204 are stored", arguments: [200, 201, 202, 203, 204, 206])
    func storedStatuses(status: Int) async throws {
        let inner = ScriptedTransport([.status(status, headers: ["ETag": "\"v1\""], body: status == 204 ? "" : "x")])
        let store = InMemoryETagStore()
        let etag = ETagTransport(inner: inner, store: store)
        _ = try await etag.data(for: Self.get())
        #expect((await store.count == 1) == [200, 203, 204].contains(status))
    }
}
