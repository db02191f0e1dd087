import Foundation
import GentleNetworking
import GentleNetworkingTesting

struct Model: Codable, Sendable, Equatable {
    let id: Int
    let property: String
}

/// A fresh, private directory for a credentials store, removed by the caller.
func makeTemporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("gentle-tests-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A URLSession with no shared state (cookies, cache) between tests.
func makeIsolatedSession() -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpCookieStorage = nil
    configuration.urlCache = nil
    configuration.timeoutIntervalForRequest = 30
    return URLSession(configuration: configuration)
}

/// The real transports the shared integration suite runs against.
enum TransportKind: String, Sendable, CustomStringConvertible {
    case urlSession
    case curl

    /// Every real transport available on this platform.
    static var all: [TransportKind] {
        #if canImport(CCurl)
            [.urlSession, .curl]
        #else
            [.urlSession]
        #endif
    }

    var description: String { rawValue }

    func make(maxRedirects: Int = 10, totalTimeout: TimeInterval? = nil) throws -> any HTTPTransportProtocol {
        switch self {
        case .urlSession:
            return URLSessionTransport(
                session: makeIsolatedSession(), maxRedirects: maxRedirects, totalTimeout: totalTimeout)
        case .curl:
            #if canImport(CCurl)
                return try CurlTransport(
                    configuration: CurlTransport.Configuration(totalTimeout: totalTimeout, maxRedirects: maxRedirects))
            #else
                throw TransportError(.other, url: nil, message: "CurlTransport is Linux-only")
            #endif
        }
    }
}

/// A loopback server plus a service pointed at it, over a real transport.
struct LoopbackHarness {
    let server: LoopbackServer
    let auth: InMemoryAuthService
    let service: HTTPNetworkService
    let environment: DefaultAPIEnvironment

    init(
        kind: TransportKind = .urlSession, token: String? = "token-1", transport: (any HTTPTransportProtocol)? = nil,
        logger: any NetworkLogger = NoOpNetworkLogger()
    ) throws {
        server = try LoopbackServer()
        auth = InMemoryAuthService(token: token)
        service = HTTPNetworkService(transport: try transport ?? kind.make(), authService: auth, logger: logger)
        environment = DefaultAPIEnvironment(baseURL: server.baseURL)
    }
}

/// Collects log records for assertions.
final class RecordingLogger: NetworkLogger {
    private let storage = LockedRecords()
    func log(_ record: NetworkLogRecord) { storage.append(record) }
    var records: [NetworkLogRecord] { storage.all }
}

final class LockedRecords: @unchecked Sendable {
    // @unchecked: `records` is only touched while holding `lock`.
    private let lock = NSLock()
    private var records: [NetworkLogRecord] = []
    func append(_ record: NetworkLogRecord) {
        lock.lock()
        records.append(record)
        lock.unlock()
    }
    var all: [NetworkLogRecord] {
        lock.lock()
        defer { lock.unlock() }
        return records
    }
}

/// Runs blocking work (child processes, sleeps) on a dispatch thread instead of the cooperative
/// pool, which has only as many threads as cores.
func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try work() })
        }
    }
}

/// `count` bytes numbered from `start`, byte `i` being `i * multiplier + (i >> 10)` truncated:
/// no two nearby offsets alike, so loss or reordering shows. Written through a buffer pointer:
/// `(0..<n).map { … }` takes a second for 8 MiB in a debug build and five under ThreadSanitizer,
/// on a cooperative pool thread, starving parallel tests that wait on the network (gdb on a
/// suite run found both pool threads in such maps for seconds at a time).
func patternBytes(_ count: Int, multiplier: Int, from start: Int = 0) -> Data {
    var data = Data(count: max(0, count))
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        for offset in 0..<buffer.count {
            let index = start &+ offset
            base[offset] = UInt8(truncatingIfNeeded: index &* multiplier &+ (index >> 10))
        }
    }
    return data
}

/// `count` lowercase ASCII letters in a pattern that does not repeat within 26 KiB, built as
/// ``patternBytes(_:multiplier:from:)`` is (a `Character` at a time takes 4 s for 5 MB in a
/// debug build).
func letterPattern(_ count: Int) -> String {
    var data = Data(count: max(0, count))
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        for index in 0..<buffer.count {
            base[index] = 97 &+ UInt8(truncatingIfNeeded: (index &* 7 &+ (index >> 10)) % 26)
        }
    }
    return String(decoding: data, as: UTF8.self)
}

/// Compresses `data` with a real command-line tool, reading stdin and writing stdout.
func compress(_ data: Data, with command: [String]) async throws -> Data {
    try await offCooperativePool { try compressBlocking(data, with: command) }
}

func compressBlocking(_ data: Data, with command: [String]) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = command
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try ProcessLauncher.run(process)
    input.fileHandleForWriting.write(data)
    try input.fileHandleForWriting.close()
    let compressed = output.fileHandleForReading.readDataToEndOfFile()
    while process.isRunning { Thread.sleep(forTimeInterval: 0.005) }
    guard process.terminationStatus == 0 else {
        throw TransportError(.other, url: nil, message: "\(command) exited with \(process.terminationStatus)")
    }
    return compressed
}

extension Locked where Value == Int {
    /// Adds one and returns the new count: a server route's call number.
    func increment() -> Int {
        withLock { value -> Int in
            value += 1
            return value
        }
    }
}
