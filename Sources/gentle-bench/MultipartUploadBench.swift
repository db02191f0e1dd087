import Foundation
import GentleNetworking
import GentleNetworkingTesting
import YNetwork

/// The 50 MB multipart upload through YNetwork's `NetworkManager`, in child processes so that
/// each peak RSS counts that upload only: once streamed (the library's path for bodies above
/// 10 MiB) and once with the body built in memory first (the naive baseline).
enum MultipartUploadBench {
    static let fileSize = 50 * 1000 * 1000

    private struct StreamedUpload: MultipartRequest {
        let url: String
        let multipart: MultipartBuilder
        var path: PathRepresentable { url }
    }

    private struct InMemoryUpload: NetworkRequest {
        let url: String
        let bytes: Data
        let boundary: String
        var path: PathRepresentable { url }
        var method: HttpMethod { .POST }
        var requestType: RequestContentType { .multipart(boundary: boundary) }
        var body: BodyBuilder? { bytes }
        var parserFactory: DataParserFactory? { BinaryBodies() }
    }

    /// JSON responses, and request bodies sent as they are (the in-memory body is already multipart).
    private struct BinaryBodies: DataParserFactory {
        func decoder(for contentType: ResponseContentType) -> DataDecoder? { JSONDecoder() }
        func encoder(for contentType: RequestContentType) -> DataEncoder? { nil }
    }

    private struct Receipt: Decodable, Sendable {
        let received: Int
    }

    /// `--multipart-child URL FILE streamed|in-memory`: uploads FILE as a multipart part and
    /// prints `<peak RSS bytes> <seconds>`.
    static func child(url: URL, file: URL, inMemory: Bool) async throws {
        let form = MultipartForm(
            parts: [
                "note": .formField(value: "gentle-bench"),
                "file": .file(
                    info: MultipartFileInfo(fileName: "upload.bin", fileURL: file, mimeType: "application/octet-stream")
                ),
            ],
            boundary: "gentle-bench-boundary")
        let manager = NetworkManager()
        let started = DispatchTime.now().uptimeNanoseconds
        let receipt: Receipt
        if inMemory {
            let bytes = try form.body(encoder: nil)
            receipt = try await manager.submit(
                InMemoryUpload(url: url.absoluteString, bytes: bytes, boundary: form.boundary))
        } else {
            receipt = try await manager.submit(StreamedUpload(url: url.absoluteString, multipart: form))
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        guard Int64(receipt.received) == (try form.contentLength()) else {
            throw BenchError("the server received \(receipt.received) bytes, not \(try form.contentLength())")
        }
        print("\(peakResidentBytes()) \(seconds)")
    }

    /// Runs both children against a loopback server and returns their peak RSS and seconds.
    static func measure(workDirectory: URL) throws -> (streamed: (Int, Double), inMemory: (Int, Double)) {
        let file = workDirectory.appendingPathComponent("multipart-50MB.bin")
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: file)
        else { throw BenchError("cannot create the 50 MB file") }
        let block = Data(repeating: 0x5A, count: 1 << 20)
        var written = 0
        while written < fileSize {
            let chunk = block.prefix(fileSize - written)
            try handle.write(contentsOf: chunk)
            written += chunk.count
        }
        try handle.close()
        defer { try? FileManager.default.removeItem(at: file) }

        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { request in
            server.clearRecordedRequests()  // keep only one 50 MB body in the parent
            return .json(#"{"received":\#(request.body.count)}"#)
        }
        let url = server.url("/upload").absoluteString
        let streamed = try runChild(["--multipart-child", url, file.path, "streamed"])
        let inMemory = try runChild(["--multipart-child", url, file.path, "in-memory"])
        return (streamed, inMemory)
    }
}

/// Runs this executable with `arguments` and reads the `<peak RSS bytes> <seconds>` it prints.
func runChild(_ arguments: [String]) throws -> (Int, Double) {
    let text = try ScaleBench.runChildProcess(arguments)
    let fields = text.split(separator: " ").map(String.init)
    guard fields.count == 2, let peak = Int(fields[0]),
        let seconds = Double(fields[1].trimmingCharacters(in: .whitespacesAndNewlines))
    else {
        throw BenchError("the child \(arguments.first ?? "") failed: \(text)")
    }
    return (peak, seconds)
}
