import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(CCurl)
    /// A file-transfer transport that cannot stop at a limit: it leaves
    /// `download(for:to:maxBytes:progress:)` to the protocol's default.
    private struct UnlimitedFileTransfer: FileTransferTransport {
        let inner: CurlTransport

        func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            try await inner.data(for: request)
        }

        func download(
            for request: URLRequest, to destination: URL, progress: (@Sendable (TransferProgress) -> Void)?
        ) async throws -> HTTPURLResponse {
            try await inner.download(for: request, to: destination, progress: progress)
        }

        func upload(
            for request: URLRequest, fromFile file: URL, progress: (@Sendable (TransferProgress) -> Void)?
        ) async throws -> (Data, HTTPURLResponse) {
            try await inner.upload(for: request, fromFile: file, progress: progress)
        }
    }

    @Suite("A download checked after the fact (the protocol's default) never costs the caller the file already there")
    struct DownloadWithinLimitTests {
        @Test("Past the limit: responseTooLarge, the old file whole, nothing left beside it; within it: replaced")
        func oldFileKept() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/eleven") { _ in .text("eleven byte") }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let destination = directory.appendingPathComponent("report.txt")
            try Data("the old report".utf8).write(to: destination)
            let transport = UnlimitedFileTransfer(inner: try CurlTransport())
            let request = URLRequest(url: server.url("/eleven"))

            await #expect {
                _ = try await transport.download(for: request, to: destination, maxBytes: 10, progress: nil)
            } throws: { ($0 as? TransportError)?.code == .responseTooLarge }
            #expect(try Data(contentsOf: destination) == Data("the old report".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["report.txt"])

            let response = try await transport.download(for: request, to: destination, maxBytes: 11, progress: nil)
            #expect(response.statusCode == 200)
            #expect(try Data(contentsOf: destination) == Data("eleven byte".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["report.txt"])
            #expect(server.requests(path: "/eleven").count == 2)
        }

        @Test("A directory as the destination is refused before anything is sent, with a limit as without")
        func directoryRefused() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/x") { _ in .text("x") }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let transport = UnlimitedFileTransfer(inner: try CurlTransport())
            for limit in [Int64(10), nil] {
                await #expect {
                    _ = try await transport.download(
                        for: URLRequest(url: server.url("/x")), to: directory, maxBytes: limit, progress: nil)
                } throws: { ($0 as? TransportError)?.code == .invalidRequest }
            }
            #expect(server.requests(path: "/x").isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }
#endif
