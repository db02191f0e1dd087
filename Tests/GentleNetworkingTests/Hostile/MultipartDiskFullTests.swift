import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

/// A multipart body written to a disk that fills up stops reading its file parts at the first
/// failed write: a 4 GB video part is not read to its end for a body that can no longer be
/// written. The disk is "full" in a `gentle-probe` child whose file size is limited
/// (`RLIMIT_FSIZE`), which reports the bytes it read (`rchar`).
@Suite("Multipart: a full disk stops the body's file reads", .serialized)
struct MultipartDiskFullTests {
    struct ProbeOutcome: Decodable {
        let outcome: String
        let bytesRead: Int?
        let destinationExists: Bool
        let description: String?
    }

    @Test(
        "A write past the file size limit: MultipartError.cannotWrite, no file, and the 24 MiB part read only to the failure"
    )
    func stopsReadingAtTheFailedWrite() async throws {
        let scratch = try makeScratchDirectory("multipart-disk-full")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = scratch.appendingPathComponent("video.bin")
        let sourceBytes = 24 << 20
        try Data(repeating: 0x5A, count: sourceBytes).write(to: source)
        let destination = scratch.appendingPathComponent("body").path
        let data = try await DownloadDiskFullTests.runProbe([
            "multipart-fsize", source.path, destination, String(1 << 20),
        ])
        let outcome = try JSONDecoder().decode(ProbeOutcome.self, from: data)
        #expect(outcome.outcome == "error", "\(outcome)")
        #expect(outcome.description?.contains("Cannot write the multipart body") == true, "\(outcome)")
        #expect(!outcome.destinationExists)
        let read = try #require(outcome.bytesRead, "\(outcome)")
        // 1 MiB written, then one 256 KiB chunk at most past it, plus the process's own reads.
        #expect(read < 4 << 20, "read \(read) of the \(sourceBytes)-byte part after the disk filled up")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["video.bin"])
    }
}
