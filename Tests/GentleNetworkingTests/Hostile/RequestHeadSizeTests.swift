import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request head no server takes (a URL, one header or all of them too large, or too many
/// fields) is one typed error on every transport and every kind of transfer, before a byte is
/// sent. Unchecked, libcurl called a 9 MB header "out of memory" (`.responseTooLarge`), a URL
/// above 8 MB malformed (`.other`), and URLSession sent both.
@Suite("Request head size: .invalidRequest on every transport, nothing sent")
struct RequestHeadSizeTests {
    /// Every way a transport sends `request`, by name.
    static func sends(
        _ request: URLRequest, through transport: any HTTPTransportProtocol, directory: URL
    ) throws -> [(String, @Sendable () async throws -> Void)] {
        var sends: [(String, @Sendable () async throws -> Void)] = [
            ("data", { _ = try await transport.data(for: request) }),
            ("stream", { _ = try await transport.stream(for: request) }),
        ]
        if let files = transport as? any FileTransferTransport {
            let upload = directory.appendingPathComponent("upload.bin")
            try Data("body".utf8).write(to: upload)
            let destination = directory.appendingPathComponent("download.bin")
            sends.append(("upload", { _ = try await files.upload(for: request, fromFile: upload, progress: nil) }))
            sends.append(
                ("download", { _ = try await files.download(for: request, to: destination, progress: nil) }))
        }
        return sends
    }

    /// The oversized requests, by name, against `server`.
    static func oversized(_ server: LoopbackServer) -> [(String, URLRequest)] {
        let longURL = server.url("/x?q=" + String(repeating: "a", count: 300 << 10))
        var longHeader = URLRequest(url: server.url("/x"))
        longHeader.setValue(String(repeating: "v", count: 300 << 10), forHTTPHeaderField: "X-Large")
        var manyFields = URLRequest(url: server.url("/x"))
        for index in 0..<300 { manyFields.setValue("1", forHTTPHeaderField: "X-F\(index)") }
        return [
            ("a 300 KiB URL", URLRequest(url: longURL)), ("a 300 KiB header", longHeader),
            ("300 header fields", manyFields),
        ]
    }

    @Test(
        "A 300 KiB URL or header, or 300 header fields, is .invalidRequest naming the limit on every send",
        arguments: TransportKind.all)
    func oversizedHeads(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let transport = try kind.make()
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (what, request) in Self.oversized(server) {
            for (send, run) in try Self.sends(request, through: transport, directory: directory) {
                do {
                    try await run()
                    Issue.record("\(what) was sent by \(send)")
                } catch let error as TransportError {
                    #expect(error.code == .invalidRequest, "\(what), \(send): \(error)")
                    #expect(error.message.contains("RequestValidator.maxRequest"), "\(what), \(send): \(error.message)")
                    #expect(!error.message.contains("vvvv"), "the value must never be echoed")
                }
            }
        }
        #expect(server.receivedRequests.isEmpty, "nothing reached the server: \(server.receivedRequests.count)")
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test("A head within the limits is sent whole: 200 fields and a 4 KiB URL", arguments: TransportKind.all)
    func withinLimits(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/x") { _ in .status(204) }
        let transport = try kind.make()
        var request = URLRequest(url: server.url("/x?q=" + String(repeating: "b", count: 4096)))
        for index in 0..<200 { request.setValue("v\(index)", forHTTPHeaderField: "X-F\(index)") }
        let (_, response) = try await transport.data(for: request)
        #expect(response.statusCode == 204)
        let received = try #require(server.requests(path: "/x").first)
        #expect(received.header("X-F199") == "v199")
        #expect(received.header("X-F0") == "v0")
    }

    @Test("An endpoint with 20,000 headers is .invalidRequest before they are set; nothing is sent")
    func manyEndpointHeaders() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let service = HTTPNetworkService(transport: try TransportKind.all[0].make())
        var headers: [String: String] = [:]
        for index in 0..<20_000 { headers["X-F\(index)"] = "1" }
        do {
            try await service.requestVoid(
                to: Endpoint(path: "/x", method: .get, headers: headers),
                via: DefaultAPIEnvironment(baseURL: server.baseURL))
            Issue.record("20,000 headers were sent")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest, "\(error)")
            #expect(error.message.contains("20000 header fields"), "\(error.message)")
        }
        #expect(server.receivedRequests.isEmpty)
        #expect(server.acceptedConnectionCount == 0, "no connection was even opened")
    }

    @Test("The head's size counts the method, the URL and each field with its separators")
    func sizeArithmetic() throws {
        #expect(RequestValidator.headBytes(name: "A", value: "bc") == 7)
        #expect(RequestValidator.headBytes(of: ["A": "bc", "Dd": ""]) == 13)
        // Exactly at the limit passes; a byte more does not.
        let url = try #require(URL(string: "http://h/"))
        try RequestValidator.checkHeadSize(fieldCount: 256, bytes: 256 << 10, url: url)
        #expect(throws: TransportError.self) {
            try RequestValidator.checkHeadSize(fieldCount: 256, bytes: (256 << 10) + 1, url: url)
        }
        #expect(throws: TransportError.self) {
            try RequestValidator.checkHeadSize(fieldCount: 257, bytes: 0, url: url)
        }
    }
}
