import Foundation

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The conditional-GET cache: what it reads from responses (`ETag`, `Cache-Control`, `Vary`),
/// how a 304 updates an entry, the cache key, and the disk store's file format.
///
/// Input: the first byte picks the mode. Even: three sections of `Name: value` lines separated
/// by a `--` line: the stored 2xx's headers, the 304's headers, the request's headers (`Q` is
/// reserved: the harness adds `Authorization: Bearer QQQQQQQQ`). Odd: the rest is a
/// `DiskETagStore` file.
///
/// Asserts: no trap; `no-store` and `Vary: *` are never storable; a revalidated entry keeps its
/// body, status and framing headers, takes every other header of the 304 exactly once (case
/// ignored) and its `ETag`; the cache key never holds a credential, differs for different
/// credentials and ignores header-name case; a decoded disk file re-encodes to the same entry.
enum ETagTarget {
    static let url = URL(string: "https://api.example.com/items?page=1")!
    static let secret = "QQQQQQQQ"

    static func run(_ input: FuzzInput) {
        var input = input
        if input.byte() % 2 == 1 {
            diskFile(input.rest())
            return
        }
        let text = String(decoding: input.rest(), as: UTF8.self).replacingOccurrences(of: "Q", with: "q")
        let sections = text.components(separatedBy: "\n--\n")
        let stored = headers(sections[0])
        let notModified = sections.count > 1 ? headers(sections[1]) : [:]
        let requestHeaders = sections.count > 2 ? headers(sections[2]) : [:]
        storability(stored)
        revalidation(stored: stored, notModified: notModified)
        keys(requestHeaders)
    }

    /// `Name: value` lines, as a server's response would carry them (invalid ones dropped, and
    /// a name that differs only in case from an earlier one: Foundation keeps one of them).
    static func headers(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var seen: Set<String> = []
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard RequestValidator.isValidHeaderName(name), RequestValidator.isValidHeaderValue(value),
                seen.insert(name.lowercased()).inserted
            else { continue }
            result[name] = value
        }
        return result
    }

    static func storability(_ headers: [String: String]) {
        let storable = ETagTransport.isStorable(headers)
        let request = URLRequest(url: url)
        let withRequest = ETagTransport.isStorable(
            headers, varyAllowed: ETagTransport.storableVaryHeaders, request: request)
        if withRequest, !storable { violated("storable for a request but not without one: \(headers)") }
        let matches = headers.filter { $0.key.lowercased() == "cache-control" }
        let vary = headers.filter { $0.key.lowercased() == "vary" }
        if matches.count == 1, let value = matches.first?.value,
            value.lowercased().split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == "no-store"
            }),
            storable
        {
            violated("no-store is storable: \(value.debugDescription)")
        }
        if vary.count == 1, let value = vary.first?.value,
            value.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "*" }), storable
        {
            violated("Vary: * is storable: \(value.debugDescription)")
        }
    }

    static func revalidation(stored: [String: String], notModified: [String: String]) {
        let cached = CachedResponse(
            body: Data("cached body".utf8), statusCode: 200, headers: stored, url: url, etag: "\"v1\"",
            storedAt: Date(timeIntervalSince1970: 0))
        guard
            let response = HTTPURLResponse(
                url: url, statusCode: 304, httpVersion: "HTTP/1.1", headerFields: notModified)
        else { return }
        // As `data(for:)` renews: from the built response's headers.
        let received = HTTPErrorResponse(response, body: Data()).headers
        let updated = ETagTransport.revalidate(cached, withHeaders: received)
        if updated.body != cached.body || updated.statusCode != cached.statusCode {
            violated("a 304 changed the body or status")
        }
        // As `deferredData(for:)` renews: from the fields as received, unmerged. Where no two
        // names differ only in case (the merge order of such a pair is the dictionary's), both
        // give the same entry, names compared case-insensitively.
        let lowered = Set(notModified.keys.map { $0.lowercased() })
        if lowered.count == notModified.count, !notModified.keys.contains(where: \.isEmpty) {
            let fromFields = ETagTransport.revalidate(cached, withFields: notModified.map { ($0.key, $0.value) })
            func folded(_ headers: [String: String]) -> [String: String] {
                Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
            }
            if folded(fromFields.headers) != folded(updated.headers) || fromFields.etag != updated.etag {
                violated("renewing from the fields as received differs: \(fromFields.headers) vs \(updated.headers)")
            }
        }
        // The framing of the 304 itself, and any field that may carry a credential (a name the
        // logs redact: cookies, tokens, sessions), never reach the entry.
        let excluded: Set<String> = ["content-length", "transfer-encoding", "content-encoding", "connection"]
        for (name, value) in received {
            let lowered = name.lowercased()
            let present = updated.headers.filter { $0.key.lowercased() == lowered }
            if excluded.contains(lowered) || Redactor.isSensitiveName(name) {
                let before = cached.headers.filter { $0.key.lowercased() == lowered }
                if present.count != before.count || Set(present.values) != Set(before.values) {
                    violated("the 304's \(name) replaced the stored one")
                }
            } else if received.keys.filter({ $0.lowercased() == lowered }).count == 1 {
                if present.count != 1 || present.first?.value != value {
                    violated("the 304's \(name): \(value.debugDescription) became \(present)")
                }
            }
        }
        if let etag = ETagTransport.header("ETag", in: received), updated.etag != etag {
            violated("the 304's ETag \(etag.debugDescription) was not taken")
        }
    }

    static func keys(_ headers: [String: String]) {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        var first = request
        first.setValue("Bearer " + secret, forHTTPHeaderField: "Authorization")
        var second = request
        second.setValue("Bearer " + secret + "2", forHTTPHeaderField: "Authorization")
        let credentials: Set<String> = ["x-api-key", "X-Custom-Token"]
        let key = ETagTransport.cacheKey(for: first, credentialHeaders: credentials)
        if key.contains(secret) { violated("the cache key holds the credential: \(key)") }
        if key == ETagTransport.cacheKey(for: second, credentialHeaders: credentials) {
            violated("two credentials give the same key: \(key)")
        }
        var recased = URLRequest(url: url)
        for (name, value) in first.allHTTPHeaderFields ?? [:] {
            recased.setValue(value, forHTTPHeaderField: name.uppercased())
        }
        if (first.allHTTPHeaderFields ?? [:]).count == (recased.allHTTPHeaderFields ?? [:]).count,
            key != ETagTransport.cacheKey(for: recased, credentialHeaders: credentials)
        {
            violated("the cache key depends on header-name case")
        }
    }

    static func diskFile(_ bytes: [UInt8]) {
        guard let (key, response) = DiskETagStore.decode(Data(bytes)) else { return }
        guard let encoded = DiskETagStore.encode(response, key: key),
            let (again, decoded) = DiskETagStore.decode(encoded)
        else {
            violated("a decoded entry does not re-encode")
        }
        if again != key || decoded.body != response.body || decoded.statusCode != response.statusCode
            || decoded.headers != response.headers || decoded.etag != response.etag
        {
            violated("a disk entry changed in a round trip")
        }
    }
}
