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
/// Memory is bounded: at most `maxEntries` entries are kept, each as the JSON text the file will
/// hold (made once, when its outcome arrives), at most `maxBytes` of that text in all (later
/// entries are counted in `_droppedEntries`), and a request with no response or failure yet is
/// held until then (at most `maxEntries` of them, counted in `maxBytes` by the text their records
/// keep: URL, header fields, up to 64 KiB of body). ``harData()`` is built in one buffer the size
/// of the file and ``write(to:)`` streams the kept text to the file, so neither holds a second
/// copy of the entries. Each entry keeps at most 8 KiB of a header value, 64 KiB of a header list
/// (the rest counted in a `_truncated` pseudo-header), 16 KiB of a URL and 1 KiB of a body, so a
/// hostile server's heads fill the byte budget, not the process's memory.
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
        /// Each kept entry as the JSON text of its object in the file, with the number its
        /// outcome got when it arrived: kept in that order, whichever entry was built first.
        var entries: [(order: UInt64, json: [UInt8])] = []
        /// What `entries` weigh against ``HARRecorder/maxBytes``: each one's JSON bytes plus
        /// ``HARRecorder/entryOverhead``.
        var bytes = 0
        var dropped = 0
        var firstRecord: Date?
        /// The number the next outcome gets (the order of the entries).
        var nextOrder: UInt64 = 0
        /// The number of the next outcome to keep or drop: every earlier one is decided.
        var nextCommit: UInt64 = 0
        /// Entries built before an earlier outcome's, waiting for it, by number.
        var built: [UInt64: [UInt8]] = [:]
        /// The JSON bytes `built` holds, counted with the entries' at each claim.
        var builtBytes = 0
        /// Bumped by ``HARRecorder/reset()``: an entry being built when the recorder was reset
        /// belongs to the session it forgot, and is not kept.
        var generation: UInt64 = 0
    }

    /// The most entries kept: 10,000 by default.
    public let maxEntries: Int
    /// The most bytes the kept entries hold together: the JSON text each one has in the file
    /// (URLs, header names and values, body excerpts, timings and the other fields), plus
    /// 64 bytes each for its bookkeeping; 32 MiB by default. An entry that would go past it is
    /// dropped and counted in `_droppedEntries`, like one past `maxEntries`.
    public let maxBytes: Int
    /// The name in the file's `creator`.
    public let creatorName: String
    private let state = Locked(State())

    /// Creates an empty recorder.
    ///
    /// - Parameters:
    ///   - creatorName: The `creator.name` of the file; `"GentleNetworking"` by default.
    ///   - maxEntries: The most entries kept; 10,000 by default. Values below 1 count as 1.
    ///   - maxBytes: The most bytes the entries hold together; 32 MiB by default. Values below 1
    ///     count as 1 (every entry is then dropped and counted).
    public init(creatorName: String = "GentleNetworking", maxEntries: Int = 10_000, maxBytes: Int = 32 << 20) {
        self.creatorName = creatorName
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = max(1, maxBytes)
    }

    /// How many entries the file would hold now.
    public var entryCount: Int { state.withLock { $0.entries.count } }

    /// The requests held for their outcome, and the bytes they count against ``maxBytes`` (for tests).
    var pendingLoad: (count: Int, bytes: Int) { state.withLock { ($0.pending.count, $0.pendingBytes) } }

    /// The entries built and waiting for an earlier outcome's, and their bytes (for tests).
    var builtLoad: (count: Int, bytes: Int) { state.withLock { ($0.built.count, $0.builtBytes) } }

    /// What the kept entries hold (for tests): their JSON bytes, the bytes their storage holds
    /// (its capacity), and what they count against ``maxBytes``.
    var entryLoad: (bytes: Int, capacity: Int, counted: Int) {
        state.withLock { state in
            state.entries.reduce((0, 0, state.bytes)) { load, entry in
                (load.0 &+ entry.json.count, load.1 &+ entry.json.capacity, load.2)
            }
        }
    }

    /// What an entry weighs against ``maxBytes`` besides its JSON bytes: its array's header and
    /// its slot in the list of entries (48 bytes), with room for the allocator's rounding.
    static let entryOverhead = 64

    /// Keeps `record`: a request waits for its response or failure, which makes the entry.
    ///
    /// The entry is built and serialized outside the recorder's lock, which guards only the
    /// bookkeeping: loggers on other threads never wait for another's entry to be written.
    public func log(_ record: NetworkLogRecord) {
        switch record.event {
        case .request:
            // Held within the byte budget too: 10,000 uploads in flight kept 64 KiB of body
            // each (640 MB) whatever `maxBytes` said. One that does not fit makes an entry
            // without its request's details.
            let weight = Self.clampedSum(256, record.retainedBytes)
            state.withLock { state in
                if state.firstRecord == nil { state.firstRecord = record.timestamp }
                guard state.pending.count < maxEntries, weight <= maxBytes - state.bytes - state.pendingBytes else {
                    return
                }
                if let replaced = state.pending.updateValue((record, weight), forKey: record.requestID) {
                    state.pendingBytes -= replaced.weight
                }
                state.pendingBytes += weight
            }
        case .redirect, .retry, .refresh, .cache:
            // Kept in the outcome's metrics (`_steps`), which hold every step in order.
            state.withLock { state in
                if state.firstRecord == nil { state.firstRecord = record.timestamp }
            }
        case .response, .failure:
            let claim: (request: NetworkLogRecord?, order: UInt64, generation: UInt64)? = state.withLock { state in
                if state.firstRecord == nil { state.firstRecord = record.timestamp }
                let pending = state.pending.removeValue(forKey: record.requestID)
                if let pending { state.pendingBytes -= pending.weight }
                // Outcomes claimed and not yet kept or dropped count too: while an earlier one was
                // still being built, every later one was claimed, and waited in `built` beyond
                // both limits (2,000 entries of 64 KiB held for a 64 KiB budget).
                let inFlight = Int(clamping: state.nextOrder &- state.nextCommit)
                guard state.entries.count &+ inFlight < maxEntries, state.bytes &+ state.builtBytes < maxBytes
                else {
                    state.dropped += 1
                    return nil
                }
                let order = state.nextOrder
                state.nextOrder &+= 1
                return (pending?.record, order, state.generation)
            }
            guard let claim else { return }
            let json = Self.entryJSON(request: claim.request, outcome: record)
            state.withLock { state in
                guard state.generation == claim.generation else { return }
                // Outcomes logged at once on several threads are kept, or dropped by the limits,
                // in the order they arrived: an entry built before an earlier one waits for it.
                // (Judged as each was built, a later entry took the last place and the first
                // outcome was the one dropped.)
                state.built[claim.order] = json
                state.builtBytes &+= json.count
                while let next = state.built.removeValue(forKey: state.nextCommit) {
                    state.builtBytes &-= next.count
                    let weight = Self.clampedSum(next.count, Self.entryOverhead)
                    if state.entries.count < maxEntries, weight <= maxBytes - state.bytes - state.pendingBytes {
                        state.bytes += weight
                        state.entries.append((state.nextCommit, next))
                    } else {
                        state.dropped += 1
                    }
                    state.nextCommit &+= 1
                }
            }
        }
    }

    /// Forgets every entry.
    public func reset() {
        let forgotten = state.withLock { state in
            let forgotten = state
            state = State(generation: state.generation &+ 1)
            return forgotten
        }
        // Released here, outside the lock.
        withExtendedLifetime(forgotten) {}
    }

    /// The HAR file's JSON: one page for the session, then the entries in the order they ended.
    ///
    /// It is built in one buffer of its exact size from the entries' kept text: at most about
    /// `maxBytes` besides what the recorder already holds.
    public func harData() -> Data {
        let document = self.document()
        var data = Data(capacity: document.size)
        document.forEachPart { part in
            guard let base = part.baseAddress else { return }
            data.append(base.assumingMemoryBound(to: UInt8.self), count: part.count)
        }
        return data
    }

    /// Writes ``harData()`` to `url`, replacing the file atomically, readable by its owner only
    /// (it holds URLs and bodies, redacted but private).
    ///
    /// The file is created with mode `0600` before its first byte is written (a temporary file
    /// in the same directory, renamed over `url`), so no other user can open it at any moment,
    /// whatever the umask or the mode of a file it replaces. A symbolic link at `url` is replaced,
    /// not followed. The entries are streamed to the file from the text the recorder keeps: no
    /// copy of the whole file is made in memory.
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
            try AtomicFile.write(to: path, mode: 0o600) { emit in document().forEachPart { _ = emit($0) } }
        } catch {
            throw error.cocoaError(target: path)
        }
    }

    // MARK: The file

    /// The file at one moment, in three parts: the text before the entries (version, creator,
    /// the page), the entries' kept text, and the text after them (`_droppedEntries`).
    private struct Document {
        /// `{"log":{…,"entries":[`.
        let head: [UInt8]
        /// The entries' JSON objects, in order (shared with the recorder's state, not copied).
        let entries: [(order: UInt64, json: [UInt8])]
        /// `]…}}` and a newline.
        let tail: [UInt8]

        /// The bytes of the file: the parts, one newline before each entry and a comma between them.
        var size: Int {
            entries.reduce(HARRecorder.clampedSum(head.count, tail.count)) {
                HARRecorder.clampedSum($0, HARRecorder.clampedSum($1.json.count, 2))
            }
        }

        /// Calls `body` with each part of the file in order.
        func forEachPart(_ body: (UnsafeRawBufferPointer) -> Void) {
            head.withUnsafeBytes(body)
            for (index, entry) in entries.enumerated() {
                let separator: StaticString = index == 0 ? "\n" : ",\n"
                body(UnsafeRawBufferPointer(start: separator.utf8Start, count: separator.utf8CodeUnitCount))
                entry.json.withUnsafeBytes(body)
            }
            tail.withUnsafeBytes(body)
        }
    }

    /// The file as it is now: its head and tail written, its entries taken from the state.
    private func document() -> Document {
        let (entries, dropped, first) = state.withLock { ($0.entries, $0.dropped, $0.firstRecord) }
        var head: [UInt8] = []
        head.reserveCapacity(256)
        head.append(contentsOf: #"{"log":{"version":"1.2","creator":"#.utf8)
        HARJSON.write(.object([("name", .string(creatorName)), ("version", .string("1"))]), to: &head)
        head.append(contentsOf: #","pages":"#.utf8)
        let page = HARJSON.object([
            ("startedDateTime", .string(Self.timestamp(first ?? Date()))), ("id", .string(Self.pageID)),
            ("title", .string("\(creatorName) session")), ("pageTimings", .object([])),
        ])
        HARJSON.write(.array([page]), to: &head)
        head.append(contentsOf: #","entries":["#.utf8)
        var tail = Array("\n]".utf8)
        if dropped > 0 { tail.append(contentsOf: #","_droppedEntries":\#(dropped)"#.utf8) }
        tail.append(contentsOf: "}}\n".utf8)
        return Document(head: head, entries: entries, tail: tail)
    }

    /// `a + b`, at most `Int.max`: sizes are added without ever trapping.
    static func clampedSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }

    // MARK: Entries

    private static let pageID = "page_1"

    /// The JSON text of the entry of an exchange, in storage of its own size (an array grown
    /// while writing would hold up to twice its bytes).
    static func entryJSON(request: NetworkLogRecord?, outcome: NetworkLogRecord) -> [UInt8] {
        var json: [UInt8] = []
        json.reserveCapacity(2048)
        HARJSON.write(entry(request: request, outcome: outcome), to: &json)
        guard json.capacity > json.count &+ 64 else { return json }
        return [UInt8](unsafeUninitializedCapacity: json.count) { buffer, initialized in
            initialized = buffer.initialize(fromContentsOf: json)
        }
    }

    /// The entry of an exchange, its members in the order HAR 1.2 lists them.
    static func entry(request: NetworkLogRecord?, outcome: NetworkLogRecord) -> HARJSON {
        // A duration from a record made by hand may be anything: NaN or infinite, JSON has no
        // such number.
        let duration = finite(outcome.duration ?? 0)
        let started = request?.timestamp ?? outcome.timestamp.addingTimeInterval(-duration)
        let requestHeaders = request?.headers ?? [:]
        let url = outcome.url.utf8Prefix(maxURLBytes, marker: "…")
        let final = outcome.metrics?.finalTransaction
        let httpVersion = final?.networkProtocol.map(harVersion) ?? "HTTP/1.1"
        // HAR's bodySize is the bytes of the body sent: the body's own count when the record
        // knows it (a request without Content-Length was -1), else what the headers declare.
        let requestBodySize =
            request?.bodySize ?? declaredSize(requestHeaders) ?? (request?.bodyExcerpt == nil ? 0 : -1)
        var requestObject: [(String, HARJSON)] = [
            ("method", .string(outcome.method.utf8Prefix(64, marker: "…"))), ("url", .string(url)),
            ("httpVersion", .string(httpVersion)), ("cookies", .array([])),
            ("headers", .array(headerList(requestHeaders))),
            ("queryString", .array(queryList((request?.url ?? outcome.url).utf8Prefix(maxURLBytes)))),
        ]
        if let body = request?.bodyExcerpt {
            let type = header("Content-Type", in: requestHeaders)?.utf8Prefix(maxHeaderValueBytes, marker: "…") ?? ""
            requestObject.append(("postData", .object([("mimeType", .string(type)), ("text", .string(body))])))
        }
        requestObject.append(("headersSize", .integer(-1)))
        requestObject.append(("bodySize", .integer(requestBodySize)))

        let response: HARJSON
        var error: String?
        switch outcome.event {
        case .failure:
            response = .object([
                ("status", .integer(0)), ("statusText", .string("")), ("httpVersion", .string("")),
                ("cookies", .array([])), ("headers", .array([])),
                ("content", .object([("size", .integer(0)), ("mimeType", .string(""))])), ("redirectURL", .string("")),
                ("headersSize", .integer(-1)), ("bodySize", .integer(-1)),
            ])
            error = (outcome.errorDescription ?? "unknown error").utf8Prefix(maxHeaderValueBytes, marker: "…")
        default:
            let headers = outcome.headers
            let type = header("Content-Type", in: headers)?.utf8Prefix(maxHeaderValueBytes, marker: "…") ?? ""
            let redirect = (header("Location", in: headers) ?? "").utf8Prefix(maxURLBytes, marker: "…")
            var content: [(String, HARJSON)] = [
                // The decoded body's own size (HAR's content.size): the excerpt is cut,
                // re-serialized and escaped, and a Content-Length counts the encoded bytes.
                ("size", .integer(outcome.bodySize ?? declaredSize(headers) ?? outcome.bodyExcerpt?.utf8.count ?? 0)),
                ("mimeType", .string(type)),
            ]
            if let text = outcome.bodyExcerpt, !text.isEmpty { content.append(("text", .string(text))) }
            response = .object([
                ("status", .integer(outcome.statusCode ?? 0)),
                ("statusText", .string(HTTPURLResponse.localizedString(forStatusCode: outcome.statusCode ?? 0))),
                ("httpVersion", .string(httpVersion)), ("cookies", .array([])),
                ("headers", .array(headerList(headers))), ("content", .object(content)),
                ("redirectURL", .string(redirect)), ("headersSize", .integer(-1)),
                ("bodySize", .integer(declaredSize(headers) ?? -1)),
            ])
        }

        let (timings, time) = timings(final, total: duration * 1000)
        var entry: [(String, HARJSON)] = [
            ("pageref", .string(pageID)), ("startedDateTime", .string(timestamp(started))), ("time", .number(time)),
            ("request", .object(requestObject)), ("response", response), ("cache", .object([])),
            ("timings", .object(timings.map { ($0.name, .number($0.value)) })),
        ]
        if let address = final?.remoteAddress { entry.append(("serverIPAddress", .string(address))) }
        if let port = final?.remotePort { entry.append(("connection", .string(String(port)))) }
        if let steps = outcome.metrics?.steps, !steps.isEmpty {
            let descriptions = steps.prefix(64).map {
                HARJSON.string($0.description.utf8Prefix(maxURLBytes, marker: "…"))
            }
            entry.append(("_steps", .array(descriptions)))
        }
        if let error { entry.append(("_error", .string(error))) }
        return .object(entry)
    }

    /// HAR timings in milliseconds, and the entry's `time`: the final exchange's phases, with
    /// `blocked` the rest of `total` (earlier attempts and hops, backoff, refreshes).
    ///
    /// The time is the sum of the timings that are not -1 (`ssl` is part of `connect`), as HAR 1.2
    /// defines it: `total` when the phases fit in it, else the phases' sum (metrics made by hand
    /// may claim more than the record's duration; the time was then below its phases). Each phase
    /// is finite and at most `Clamp.maxSeconds`, so the sum is too.
    private static func timings(
        _ final: TransactionMetrics?, total: Double
    ) -> (
        timings: [(name: String, value: Double)], time: Double
    ) {
        guard let final, let end = final.responseEnd else {
            let timings: [(name: String, value: Double)] = [
                ("blocked", -1), ("dns", -1), ("connect", -1), ("send", 0), ("wait", total), ("receive", 0),
                ("ssl", -1),
            ]
            return (timings, total)
        }
        /// Milliseconds from seconds: at least 0, finite, at most `Clamp.maxSeconds` seconds.
        func ms(_ seconds: TimeInterval) -> Double { finite(seconds) * 1000 }
        let dns = final.domainLookup.map(ms) ?? -1
        let connectEnd = final.secureConnectionEnd ?? final.connectEnd
        let connect = connectEnd.map { ms($0 - (final.domainLookupEnd ?? 0)) } ?? -1
        let ssl = final.secureConnection.map(ms) ?? -1
        let sendStart = final.requestStart ?? connectEnd ?? final.domainLookupEnd ?? 0
        let sendEnd = final.requestEnd ?? sendStart
        let send = ms(sendEnd - sendStart)
        let firstByte = final.responseStart ?? end
        let wait = ms(firstByte - sendEnd)
        let receive = ms(end - firstByte)
        let phases = [dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +)
        let blocked = max(0, total - phases)
        let timings: [(name: String, value: Double)] = [
            ("blocked", blocked), ("dns", dns), ("connect", connect), ("send", send), ("wait", wait),
            ("receive", receive), ("ssl", ssl),
        ]
        return (timings, [blocked, dns, connect, send, wait, receive].filter { $0 >= 0 }.reduce(0, +))
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
    private static func headerList(_ headers: [String: String]) -> [HARJSON] {
        var list: [HARJSON] = []
        var bytes = 0
        let sorted = headers.sorted { $0.key.lowercased() < $1.key.lowercased() }
        for (index, (name, value)) in sorted.enumerated() {
            let name = name.utf8Prefix(maxHeaderValueBytes, marker: "…")
            let value = value.utf8Prefix(maxHeaderValueBytes, marker: "… (\(value.utf8.count) bytes)")
            bytes += name.utf8.count + value.utf8.count
            guard bytes <= maxHeaderListBytes else {
                list.append(.nameValue("_truncated", "\(sorted.count - index) more headers left out"))
                break
            }
            list.append(.nameValue(name, value))
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
    private static func queryList(_ url: String) -> [HARJSON] {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return [] }
        // At most 256 items: a 16 KiB query of `q=1&…` is 4,000 of them, each an object.
        return query.split(separator: "&").prefix(256).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring?) -> String {
                let raw = String(text ?? "").replacingOccurrences(of: "+", with: " ", options: .literal)
                return raw.removingPercentEncoding ?? raw
            }
            return .nameValue(decoded(parts.first), decoded(parts.count > 1 ? parts[1] : nil))
        }
    }

    private static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }
}

/// A JSON value of a HAR file, as ``HARRecorder`` builds an entry before writing it as text once.
///
/// Objects keep their members in the order given (HAR's own order), so the text is the same
/// every time; strings are escaped as JSON requires (quotes, backslashes, control characters)
/// and nothing else (a `/` stays as it is).
enum HARJSON {
    /// A string.
    case string(String)
    /// A whole number.
    case integer(Int)
    /// A number; one that is not finite is written as 0 (JSON has no such number).
    case number(Double)
    /// An array.
    case array([HARJSON])
    /// An object, its members in order.
    case object([(String, HARJSON)])

    /// The `{"name":…,"value":…}` object HAR lists headers and query items with.
    static func nameValue(_ name: String, _ value: String) -> HARJSON {
        .object([("name", .string(name)), ("value", .string(value))])
    }

    /// Appends `value` to `output` as compact JSON text.
    static func write(_ value: HARJSON, to output: inout [UInt8]) {
        switch value {
        case .string(let text):
            writeString(text, to: &output)
        case .integer(let number):
            output.append(contentsOf: String(number).utf8)
        case .number(let number):
            output.append(contentsOf: (number.isFinite ? number.description : "0").utf8)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, (key, member)) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// The hexadecimal digits a `\u00XX` escape is written with.
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string: quoted, with `"`, `\` and the control characters
    /// U+0000–U+001F escaped; the rest is its UTF-8 as is.
    static func writeString(_ text: String, to output: inout [UInt8]) {
        let backslash = UInt8(ascii: "\\")
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), backslash:
                output.append(backslash)
                output.append(byte)
            case 0x0A: output.append(contentsOf: [backslash, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [backslash, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [backslash, UInt8(ascii: "t")])
            case 0x00..<0x20:
                output.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
