import Foundation
import GentleNetworking
import GentleNetworkingTesting
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The README's `User`, which the README uses without declaring.
struct User: Codable, Sendable, Equatable {
    let id: Int
    let name: String
}

/// Sends every request to the loopback server instead of its own host (keeping path and
/// query), so README samples with `https://myendpoint.com/...` paths run on the wire.
struct LoopbackRedirectingTransport: HTTPTransportProtocol {
    let server: LoopbackServer
    let inner: any HTTPTransportProtocol

    init(server: LoopbackServer, inner: any HTTPTransportProtocol = DefaultTransport.make()) {
        self.server = server
        self.inner = inner
    }

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var rewritten = request
        if let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.scheme = "http"
            components.host = "127.0.0.1"
            components.port = Int(server.port)
            rewritten.url = components.url
        }
        return try await inner.data(for: rewritten)
    }
}

/// A manager configured for the loopback server, through `transport` (the default one unless given).
func makeManager(
    server: LoopbackServer, basePath: String? = nil, headers: HttpHeaders? = nil, timeoutInterval: TimeInterval = 0,
    transport: (any HTTPTransportProtocol)? = nil, sessionManager: (any SessionManager)? = nil,
    refreshPolicy: SessionRefreshPolicy = SessionRefreshPolicy()
) -> NetworkManager {
    let manager = NetworkManager()
    manager.configure(
        with: NetworkManagerConfiguration(
            basePath: basePath ?? server.baseURL.absoluteString, headers: headers, timeoutInterval: timeoutInterval,
            networkEngine: URLNetworkEngine(transport: transport), sessionRefreshPolicy: refreshPolicy),
        sessionManager: sessionManager)
    return manager
}

/// One part of a multipart body as a server parses it.
struct ReceivedPart: Equatable {
    var headers: [String: String]
    var body: Data

    var name: String? { disposition("name") }
    var fileName: String? { disposition("filename") }

    private func disposition(_ key: String) -> String? {
        guard let header = headers["content-disposition"] else { return nil }
        for item in header.split(separator: ";") {
            let pair = item.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == key { return String(pair[1]).trimmingCharacters(in: ["\""]) }
        }
        return nil
    }
}

/// Parses a `multipart/form-data` body the way a server does, strictly: every delimiter, CRLF
/// and the closing delimiter must be where RFC 7578 puts them, or this returns `nil`.
func parseMultipart(_ body: Data, boundary: String) -> [ReceivedPart]? {
    let delimiter = Data("--\(boundary)".utf8)
    let crlf = Data("\r\n".utf8)
    guard body.starts(with: delimiter) else { return nil }
    var parts: [ReceivedPart] = []
    var cursor = body.startIndex + delimiter.count
    while true {
        let rest = body[cursor...]
        if rest.starts(with: Data("--\r\n".utf8)) { return cursor + 4 == body.endIndex ? parts : nil }
        guard rest.starts(with: crlf) else { return nil }
        cursor += 2
        guard let headerEnd = body.range(of: Data("\r\n\r\n".utf8), in: cursor..<body.endIndex) else { return nil }
        var headers: [String: String] = [:]
        for line in String(decoding: body[cursor..<headerEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            headers[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces)
        }
        let contentStart = headerEnd.upperBound
        guard let next = body.range(of: crlf + delimiter, in: contentStart..<body.endIndex) else { return nil }
        parts.append(ReceivedPart(headers: headers, body: Data(body[contentStart..<next.lowerBound])))
        cursor = next.upperBound
    }
}

/// Waits for a handler-based call to finish: `start` is given the handler to call once.
func waitFor<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) async -> Value {
    await withCheckedContinuation { continuation in
        start { continuation.resume(returning: $0) }
    }
}

/// Polls `condition` every 10 ms for up to `seconds`; true once it holds. The default is long
/// for a starved run (ThreadSanitizer, every suite at once); a condition that holds returns at once.
func eventually(within seconds: Double = 120, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>([])

    func append(_ value: Value) {
        storage.withLock { $0.append(value) }
    }

    var values: [Value] { storage.withLock { $0 } }
}

/// `count` bytes, byte `i` being `i * multiplier + 7` truncated, written through a buffer
/// pointer: `(0..<n).map { … }` costs seconds per 10 MiB in a debug or ThreadSanitizer build, on
/// a cooperative pool thread the parallel tests need.
func patternData(_ count: Int, multiplier: Int) -> Data {
    var data = Data(count: max(0, count))
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        for index in 0..<buffer.count { base[index] = UInt8(truncatingIfNeeded: index &* multiplier &+ 7) }
    }
    return data
}

/// A fresh file of `size` bytes with a repeating pattern; removed by the caller.
func makePatternFile(size: Int) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ynetwork-tests-\(UUID().uuidString)")
    let pattern = patternData(64 * 1024, multiplier: 31)
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
    let handle = try FileHandle(forWritingTo: url)
    var remaining = size
    while remaining > 0 {
        let chunk = pattern.prefix(remaining)
        try handle.write(contentsOf: chunk)
        remaining -= chunk.count
    }
    try handle.close()
    return url
}

private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Whether the caller runs on the main queue. (Under `dispatchMain()` on Linux the main queue
/// may be drained by a thread other than the main thread, so `Thread.isMainThread` is not it.)
func isOnMainQueue() -> Bool {
    DispatchQueue.getSpecific(key: mainQueueKey) == true
}
