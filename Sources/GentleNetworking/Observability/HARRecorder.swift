import Foundation

/// A ``NetworkLogger`` that keeps every exchange as an entry of a HAR 1.2 file (HTTP Archive),
/// the format a browser's network panel opens: method, URL, headers, the start of each body,
/// the status and the time taken, and failures.
///
/// It sees only the service's log records, so what it writes is redacted as the logs are:
/// credential headers, cookies, API keys and secret-looking query, JSON and form fields are
/// `<redacted>`, and bodies are their first 1 KiB (`content.size` and `bodySize` give the real
/// sizes where the headers say them, else -1). When the record carries ``RequestMetrics`` (the
/// service's records do), the timings are the final exchange's phases (`dns`, `connect`, `ssl`,
/// `send`, `wait`, `receive`), `blocked` is the time spent before it (earlier attempts, backoff,
/// refreshes, redirect hops), the protocol and server address are filled in, and the steps
/// (redirects, retries, refreshes, cache hits) are listed in `_steps`; without metrics the whole
/// duration is `wait`. A failure is an entry with status 0 and the error in `_error`, as browsers
/// record it.
///
/// Memory is bounded: at most `maxEntries` entries are kept, holding at most `maxBytes` of text
/// in all (later entries are counted in `_droppedEntries`), and a request with no response or
/// failure yet is held until then (at most `maxEntries` of them, counted in `maxBytes` by the text
/// their records keep: URL, header fields, up to 64 KiB of body). Each entry keeps at most 8 KiB of a header value, 64 KiB of a
/// header list (the rest counted in a `_truncated` pseudo-header), 16 KiB of a URL and 1 KiB of a
/// body, so a hostile server's heads fill the byte budget, not the process's memory.
///
/// ```swift
/// let har = HARRecorder()
/// let service = HTTPNetworkService(authService: auth, logger: har)
/// // … requests …
/// try har.write(to: URL(fileURLWithPath: "session.har"))
/// ```
public final class HARRecorder: NetworkLogger, Sendable {
    private struct State {
        var pending: [UInt64: (record: NetworkLogRecord, weight: Int)] = [:]
        /// What the pending request records keep alive, counted against ``HARRecorder/maxBytes``
        /// with the entries.
        var pendingBytes = 0
        /// Each entry as `JSONSerialization` takes it.
        var entries: [[String: Any]] = []
        /// The size of `entries` as ``HARRecorder/entry(request:outcome:)`` counts it.
        var bytes = 0
        var dropped = 0
        var firstRecord: Date?
    }

    /// The most entries kept: 10,000 by default.
    public let maxEntries: Int
    /// The most bytes of text the kept entries hold together (URLs, header names and values,
    /// body excerpts, plus a few bytes for each other field): 32 MiB by default. An entry that
    /// would go past it is dropped and counted in `_droppedEntries`, like one past `maxEntries`.
    public let maxBytes: Int
    /// The name in the file's `creator`.
    public let creatorName: String
    private let state = Locked(State())

    /// Creates an empty recorder.
    ///
    /// - Parameters:
    ///   - creatorName: The `creator.name` of the file; `"GentleNetworking"` by default.
    ///   - maxEntries: The most entries kept; 10,000 by default. Values below 1 count as 1.
    ///   - maxBytes: The most bytes of text the entries hold together; 32 MiB by default. Values
    ///     below 1 count as 1 (every entry is then dropped and counted).
    public init(creatorName: String = "GentleNetworking", maxEntries: Int = 10_000, maxBytes: Int = 32 << 20) {
        self.creatorName = creatorName
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = max(1, maxBytes)
    }

    /// How many entries the file would hold now.
    public var entryCount: Int { state.withLock { $0.entries.count } }

    /// The requests held for their outcome, and the bytes they count against ``maxBytes`` (for tests).
    var pendingLoad: (count: Int, bytes: Int) { state.withLock { ($0.pending.count, $0.pendingBytes) } }

    /// Keeps `record`: a request waits for its response or failure, which makes the entry.
    public func log(_ record: NetworkLogRecord) {
        state.withLock { state in
            if state.firstRecord == nil { state.firstRecord = record.timestamp }
            switch record.event {
            case .request:
                // Held within the byte budget too: 10,000 uploads in flight kept 64 KiB of body
                // each (640 MB) whatever `maxBytes` said. One that does not fit makes an entry
                // without its request's details.
                let weight = 256 + record.retainedBytes
                guard state.pending.count < maxEntries, weight <= maxBytes - state.bytes - state.pendingBytes else {
                    return
                }
                if let replaced = state.pending.updateValue((record, weight), forKey: record.requestID) {
                    state.pendingBytes -= replaced.weight
                }
                state.pendingBytes += weight
            case .redirect, .retry, .refresh, .cache:
                // Kept in the outcome's metrics (`_steps`), which hold every step in order.
                return
            case .response, .failure:
                let pending = state.pending.removeValue(forKey: record.requestID)
                if let pending { state.pendingBytes -= pending.weight }
                let request = pending?.record
                guard state.entries.count < maxEntries, state.bytes < maxBytes else {
                    state.dropped += 1
                    return
                }
                let (entry, size) = Self.entry(request: request, outcome: record)
                guard size <= maxBytes - state.bytes - state.pendingBytes else {
                    state.dropped += 1
                    return
                }
                state.bytes += size
                state.entries.append(entry)
            }
        }
    }

    /// Forgets every entry.
    public func reset() {
        state.withLock { $0 = State() }
    }

    /// The HAR file's JSON: one page for the session, then the entries in the order they ended.
    public func harData() -> Data {
        let (entries, dropped, first) = state.withLock { ($0.entries, $0.dropped, $0.firstRecord) }
        var log: [String: Any] = [
            "version": "1.2",
            "creator": ["name": creatorName, "version": "1"],
            "pages": [
                [
                    "startedDateTime": Self.timestamp(first ?? Date()), "id": Self.pageID,
                    "title": "\(creatorName) session", "pageTimings": [String: Any](),
                ]
            ],
            "entries": entries,
        ]
        if dropped > 0 { log["_droppedEntries"] = dropped }
        let data = try? JSONSerialization.data(withJSONObject: ["log": log], options: [.sortedKeys, .prettyPrinted])
        return data
            ?? Data(#"{"log":{"version":"1.2","creator":{"name":"GentleNetworking","version":"1"},"entries":[]}}"#.utf8)
    }

    /// Writes ``harData()`` to `url`, replacing the file atomically, readable by its owner only
    /// (it holds URLs and bodies, redacted but private).
    ///
    /// The file is created with mode `0600` before its first byte is written (a temporary file
    /// in the same directory, renamed over `url`), so no other user can open it at any moment,
    /// whatever the umask or the mode of a file it replaces. A symbolic link at `url` is replaced,
    /// not followed.
    ///
    /// - Throws: `CocoaError` naming the path: `.fileNoSuchFile` when the directory does not exist,
    ///   `.fileWriteNoPermission`, `.fileWriteOutOfSpace`, `.fileWriteVolumeReadOnly`, else
    ///   `.fileWriteUnknown`, with the `POSIXError` as the underlying error. A file already at `url`
    ///   is left as it was. `.fileWriteUnsupportedScheme` when `url` is not a file URL (nothing is
    ///   written: its path is not taken as a local one).
    public func write(to url: URL) throws {
        guard let path = url.localFilePath else {
            throw CocoaError(.fileWriteUnsupportedScheme, userInfo: [NSURLErrorKey: url])
        }
        do {
            try AtomicFile.write(harData(), to: path, mode: 0o600)
        } catch {
            throw error.cocoaError(target: path)
        }
    }

    // MARK: Entries

    private static let pageID = "page_1"

    /// The entry of an exchange, and what it weighs against ``maxBytes``: the bytes of its
    /// URLs, header lists, query items, body excerpts, steps and error, plus 1 KiB for the fixed
    /// fields.
    static func entry(request: NetworkLogRecord?, outcome: NetworkLogRecord) -> (entry: [String: Any], size: Int) {
        // A duration from a record made by hand may be anything: NaN or infinite, JSON has no
        // such number and the whole file would fail to serialize (every entry lost).
        let duration = finite(outcome.duration ?? 0)
        let milliseconds = duration * 1000
        let started = request?.timestamp ?? outcome.timestamp.addingTimeInterval(-duration)
        let requestHeaders = request?.headers ?? [:]
        let url = outcome.url.utf8Prefix(maxURLBytes, marker: "…")
        let requestHeaderList = headerList(requestHeaders)
        let query = queryList((request?.url ?? outcome.url).utf8Prefix(maxURLBytes))
        var size = 1024 + url.utf8.count + bytes(of: requestHeaderList) + bytes(of: query)
        var requestObject: [String: Any] = [
            "method": outcome.method.utf8Prefix(64, marker: "…"),
            "url": url, "httpVersion": "HTTP/1.1", "cookies": [Any](),
            "headers": requestHeaderList, "queryString": query,
            "headersSize": -1, "bodySize": declaredSize(requestHeaders) ?? (request?.bodyExcerpt == nil ? 0 : -1),
        ]
        if let body = request?.bodyExcerpt {
            let type = header("Content-Type", in: requestHeaders)?.utf8Prefix(maxHeaderValueBytes, marker: "…") ?? ""
            size += body.utf8.count + type.utf8.count
            requestObject["postData"] = ["mimeType": type, "text": body]
        }
        let final = outcome.metrics?.finalTransaction
        var entry: [String: Any] = [
            "pageref": pageID, "startedDateTime": timestamp(started), "time": milliseconds, "request": requestObject,
            "cache": [String: Any](), "timings": timings(final, total: milliseconds),
        ]
        let httpVersion = final?.networkProtocol.map(harVersion) ?? "HTTP/1.1"
        requestObject["httpVersion"] = httpVersion
        entry["request"] = requestObject
        if let address = final?.remoteAddress { entry["serverIPAddress"] = address }
        if let port = final?.remotePort { entry["connection"] = String(port) }
        if let steps = outcome.metrics?.steps, !steps.isEmpty {
            let descriptions = steps.prefix(64).map { $0.description.utf8Prefix(maxURLBytes, marker: "…") }
            size += descriptions.reduce(0) { $0 + 16 + $1.utf8.count }
            entry["_steps"] = descriptions
        }
        switch outcome.event {
        case .failure:
            entry["response"] = [
                "status": 0, "statusText": "", "httpVersion": "", "cookies": [Any](), "headers": [Any](),
                "content": ["size": 0, "mimeType": ""], "redirectURL": "", "headersSize": -1, "bodySize": -1,
            ]
            let error = (outcome.errorDescription ?? "unknown error").utf8Prefix(maxHeaderValueBytes, marker: "…")
            size += error.utf8.count
            entry["_error"] = error
        default:
            let headers = outcome.headers
            let responseHeaderList = headerList(headers)
            let type = header("Content-Type", in: headers)?.utf8Prefix(maxHeaderValueBytes, marker: "…") ?? ""
            let redirect = (header("Location", in: headers) ?? "").utf8Prefix(maxURLBytes, marker: "…")
            var content: [String: Any] = [
                // The decoded body's own size (HAR's content.size): the excerpt is cut,
                // re-serialized and escaped, and a Content-Length counts the encoded bytes.
                "size": outcome.bodySize ?? declaredSize(headers) ?? outcome.bodyExcerpt?.utf8.count ?? 0,
                "mimeType": type,
            ]
            if let text = outcome.bodyExcerpt, !text.isEmpty {
                size += text.utf8.count
                content["text"] = text
            }
            size += bytes(of: responseHeaderList) + type.utf8.count + redirect.utf8.count
            entry["response"] = [
                "status": outcome.statusCode ?? 0,
                "statusText": HTTPURLResponse.localizedString(forStatusCode: outcome.statusCode ?? 0),
                "httpVersion": httpVersion, "cookies": [Any](), "headers": responseHeaderList, "content": content,
                "redirectURL": redirect, "headersSize": -1, "bodySize": declaredSize(headers) ?? -1,
            ]
        }
        return (entry, size)
    }

    /// The bytes of a list of name/value objects, with 32 for each object's own weight.
    private static func bytes(of list: [[String: String]]) -> Int {
        list.reduce(0) { total, object in object.reduce(total + 32) { $0 + $1.key.utf8.count + $1.value.utf8.count } }
    }

    /// HAR timings in milliseconds: the final exchange's phases, with `blocked` the rest of
    /// `total` (earlier attempts and hops, backoff, refreshes), so that they add up to `total`.
    private static func timings(_ final: TransactionMetrics?, total: Double) -> [String: Double] {
        guard let final, let end = final.responseEnd else {
            return ["blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": total, "receive": 0]
        }
        func ms(_ seconds: TimeInterval?) -> Double? { seconds.map { max(0, $0 * 1000) } }
        let dns = ms(final.domainLookup) ?? -1
        let connectEnd = final.secureConnectionEnd ?? final.connectEnd
        let connect = connectEnd.map { max(0, ($0 - (final.domainLookupEnd ?? 0)) * 1000) } ?? -1
        let ssl = ms(final.secureConnection) ?? -1
        let sendStart = final.requestStart ?? connectEnd ?? final.domainLookupEnd ?? 0
        let sendEnd = final.requestEnd ?? sendStart
        let send = max(0, (sendEnd - sendStart) * 1000)
        let firstByte = final.responseStart ?? end
        let wait = max(0, (firstByte - sendEnd) * 1000)
        let receive = max(0, (end - firstByte) * 1000)
        let phases = [dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +)
        let timings = [
            "blocked": max(0, total - phases), "dns": dns, "connect": connect, "ssl": ssl, "send": send, "wait": wait,
            "receive": receive,
        ]
        // Metrics made by hand may hold NaN or infinities: 0 rather than a file that cannot be
        // written.
        return timings.mapValues { $0.isFinite ? $0 : 0 }
    }

    /// `seconds` as a duration a HAR file can hold: 0 for NaN, negative or infinite values, at
    /// most `Clamp.maxSeconds`.
    static func finite(_ seconds: TimeInterval) -> TimeInterval {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return min(seconds, Clamp.maxSeconds)
    }

    /// HAR's `httpVersion` for an ALPN protocol name.
    private static func harVersion(_ name: String) -> String {
        switch name {
        case "h2": return "HTTP/2"
        case "h3": return "HTTP/3"
        default: return name.uppercased()
        }
    }

    /// The most bytes of one header value an entry keeps: 8 KiB.
    static let maxHeaderValueBytes = 8 * 1024
    /// The most bytes of names and values an entry keeps per header list: 64 KiB. A server's
    /// head may hold 256 KiB, and each control byte in it is written as six (`\u0001`): kept
    /// whole, 10,000 entries of such heads held gigabytes.
    static let maxHeaderListBytes = 64 * 1024
    /// The most bytes of a URL an entry keeps: 16 KiB.
    static let maxURLBytes = 16 * 1024

    /// The headers as HAR lists them, sorted by name, each value cut to
    /// ``maxHeaderValueBytes`` and the list to ``maxHeaderListBytes`` (the headers left out
    /// are counted in a last `_truncated` pseudo-header).
    private static func headerList(_ headers: [String: String]) -> [[String: String]] {
        var list: [[String: String]] = []
        var bytes = 0
        let sorted = headers.sorted { $0.key.lowercased() < $1.key.lowercased() }
        for (index, (name, value)) in sorted.enumerated() {
            let name = name.utf8Prefix(maxHeaderValueBytes, marker: "…")
            let value = value.utf8Prefix(maxHeaderValueBytes, marker: "… (\(value.utf8.count) bytes)")
            bytes += name.utf8.count + value.utf8.count
            guard bytes <= maxHeaderListBytes else {
                list.append(["name": "_truncated", "value": "\(sorted.count - index) more headers left out"])
                break
            }
            list.append(["name": name, "value": value])
        }
        return list
    }

    private static func header(_ name: String, in headers: [String: String]) -> String? {
        headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// The `Content-Length` the headers declare, when it is one plain number.
    private static func declaredSize(_ headers: [String: String]) -> Int? {
        header("Content-Length", in: headers).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map {
            max(0, $0)
        }
    }

    /// The query of `url` (already redacted), item by item, percent-decoded: the first 256.
    private static func queryList(_ url: String) -> [[String: String]] {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return [] }
        // At most 256 items: a 16 KiB query of `q=1&…` is 4,000 of them, each an object.
        return query.split(separator: "&").prefix(256).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring?) -> String {
                let raw = String(text ?? "").replacingOccurrences(of: "+", with: " ")
                return raw.removingPercentEncoding ?? raw
            }
            return ["name": decoded(parts.first), "value": decoded(parts.count > 1 ? parts[1] : nil)]
        }
    }

    private static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }
}
