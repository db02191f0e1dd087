import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The service's log records are redacted when read: the same fields as an eager record, the same
/// answer however many tasks read them at once, and a body's true size whatever of it was kept.
@Suite("Log records redact when read")
struct NetworkLogRecordTests {
    let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://api.example.com")!)

    @Test("Every task reading one record at once sees the same redacted fields")
    func concurrentReads() async throws {
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: CannedResponseTransport(
                cannedResponse: CannedResponse(
                    string: #"{"token":"RESP-SEKRIT","echo":"Bearer TOKEN-SEKRIT","id":1}"#,
                    headerFields: ["Set-Cookie": "sid=COOKIE-SEKRIT", "X-Echo": "TOKEN-SEKRIT"])),
            authService: InMemoryAuthService(token: "TOKEN-SEKRIT"), logger: logger)
        try await service.requestVoid(
            to: Endpoint(
                path: "/echo/TOKEN-SEKRIT", method: .get, query: [URLQueryItem(name: "q", value: "TOKEN-SEKRIT")],
                requiresAuth: true),
            via: environment)
        let records = logger.records
        #expect(records.map(\.event) == [.request, .response])
        let response = try #require(records.last)
        let readings = await withTaskGroup(of: String.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    "\(response.url)|\(response.headers.sorted { $0.key < $1.key })|\(response.bodyExcerpt ?? "")"
                }
            }
            var readings: Set<String> = []
            for await reading in group { readings.insert(reading) }
            return readings
        }
        #expect(readings.count == 1)
        let reading = try #require(readings.first)
        #expect(!reading.contains("SEKRIT"), "\(reading)")
        #expect(response.url == "https://api.example.com/echo/<redacted>?q=<redacted>")
        #expect(response.headers["Set-Cookie"] == "<redacted>")
        #expect(response.headers["X-Echo"] == "<redacted>")
        #expect(response.bodyExcerpt == #"{"echo":"<redacted>","id":1,"token":"<redacted>"}"#)
        #expect(records[0].headers["Authorization"] == "Bearer <redacted>")
    }

    @Test("A large body's excerpt comes from its start and states its whole size")
    func largeBody() async throws {
        let logger = RecordingLogger()
        let size = 3 * 1024 * 1024
        var body = Data(#"{"password":"PW-SEKRIT","data":""#.utf8)
        body.append(Data(repeating: UInt8(ascii: "x"), count: size - body.count - 2))
        body.append(Data(#""}"#.utf8))
        let service = HTTPNetworkService(
            transport: CannedResponseTransport(cannedResponse: CannedResponse(data: body)),
            authService: InMemoryAuthService(), logger: logger)
        let data = try await service.requestData(to: Endpoint(path: "/big", method: .get), via: environment).data
        #expect(data.count == size)
        let excerpt = try #require(logger.records.last?.bodyExcerpt)
        #expect(excerpt.hasPrefix(#"{"password":"<redacted>","data":"xxx"#), "\(excerpt.prefix(80))")
        #expect(excerpt.hasSuffix("… (\(size) bytes)"))
        #expect(!excerpt.contains("SEKRIT"))
    }

    @Test("A record made by hand keeps what it was given, and its mirror shows the public fields")
    func literal() {
        let record = NetworkLogRecord(
            event: .response, method: "PUT", url: "https://x/y", statusCode: 201, headers: ["A": "b"],
            bodyExcerpt: "{}", duration: 0.5, requestID: 7)
        #expect(record.method == "PUT" && record.url == "https://x/y" && record.headers == ["A": "b"])
        #expect(record.bodyExcerpt == "{}" && record.statusCode == 201 && record.requestID == 7)
        #expect(record.description == "← 201 PUT https://x/y (500.0 ms)")
        let labels = Mirror(reflecting: record).children.compactMap(\.label)
        #expect(
            labels == [
                "event", "method", "url", "statusCode", "headers", "bodyExcerpt", "duration", "errorDescription",
                "requestID", "timestamp", "step", "metrics",
            ])
    }

    /// A logger that keeps every record, as a debug console's ring buffer does.
    final class KeepingLogger: NetworkLogger {
        let records = Locked<[NetworkLogRecord]>([])
        func log(_ record: NetworkLogRecord) { records.withLock { $0.append(record) } }
    }

    @Test("A logger that keeps its records is freed with them: records do not hold the logger")
    func noCycle() async throws {
        weak var weakLogger: KeepingLogger?
        do {
            let logger = KeepingLogger()
            weakLogger = logger
            let service = HTTPNetworkService(
                transport: CannedResponseTransport(cannedResponse: CannedResponse(string: #"{"id":1}"#)),
                authService: InMemoryAuthService(), logger: logger)
            try await service.requestVoid(to: Endpoint(path: "/a", method: .get), via: environment)
            do {
                let _: Int = try await service.request(to: Endpoint(path: "/b", method: .get), via: environment)
            } catch {
                // A decoding failure: its records are kept too.
            }
            #expect(logger.records.withLock { $0.count } == 4)
        }
        #expect(weakLogger == nil, "the logger and its records leaked")
    }

    @Test("A large upload's request record states the body's whole size, from the start it keeps")
    func largeUpload() async throws {
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: CannedResponseTransport(cannedResponse: CannedResponse(string: "{}")),
            authService: InMemoryAuthService(), logger: logger)
        try await service.requestVoid(
            to: Endpoint(
                path: "/upload", method: .post,
                body: [
                    "password": EndpointAnyEncodable("PW-SEKRIT"),
                    "blob": EndpointAnyEncodable(String(repeating: "y", count: 1_000_000)),
                ]),
            via: environment)
        let excerpt = try #require(logger.records.first?.bodyExcerpt)
        #expect(excerpt.hasSuffix("bytes)") && !excerpt.contains("SEKRIT"))
        let stated = Int(excerpt.split(separator: "(").last?.split(separator: " ").first ?? "") ?? 0
        #expect(stated > 1_000_000, "the excerpt states the whole body's size, not the 64 KiB kept: \(stated)")
    }
}
