import Foundation
import Testing

@testable import YNetwork

/// Sizes a server or a caller controls that Y-Network's helpers must not trust.
@Suite("Y-Network: an error body, a multipart file and JSON text of hostile size")
struct HostileSizeTests {
    @Test("An error body above 1 MiB is kept raw, not parsed into Foundation objects (3 GB for 100 MiB)")
    func largeErrorBodyIsRaw() {
        let big = Data(("[" + Array(repeating: "0", count: 600_000).joined(separator: ",") + "]").utf8)
        #expect(big.count > HttpError.maxParsedBytes)
        let error = HttpError(statusCode: 500, headers: [:], data: big)
        guard case .raw(let data) = error.body else {
            Issue.record("parsed: \(error.body)")
            return
        }
        #expect(data == big)
        let small = HttpError(statusCode: 500, headers: [:], data: Data(#"{"error":"x"}"#.utf8))
        guard case .jsonDictionary = small.body else {
            Issue.record("not parsed: \(small.body)")
            return
        }
    }

    #if os(Linux)
        @Test("A multipart file of exabytes (a sparse file) is a typed error, not an overflow trap")
        func exabyteFile() throws {
            // tmpfs takes a sparse file of Int64.max bytes; most disk file systems refuse one.
            let directory = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
            let file = directory.appendingPathComponent("gentle-sparse-\(UUID().uuidString)")
            #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
            defer { try? FileManager.default.removeItem(at: file) }
            let handle = try FileHandle(forWritingTo: file)
            try handle.truncate(atOffset: UInt64(Int64.max))
            try handle.close()
            let form = MultipartForm(
                parts: [
                    "upload": .file(
                        info: MultipartFileInfo(fileName: "x.bin", fileURL: file, mimeType: "application/octet-stream"))
                ],
                boundary: "sparse-b")
            #expect(throws: MultipartError.self) { _ = try form.contentLength() }
        }
    #endif
}
