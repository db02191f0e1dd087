import Foundation
import YNetwork

#if canImport(Glibc)
    import Glibc
#endif

/// The child of the multipart disk-full test: writes a multipart body with one file part to a
/// destination with the process's file size limited (`RLIMIT_FSIZE`: a write past it fails with
/// `EFBIG`, the disk is "full"), and reports how many bytes the process read meanwhile
/// (`rchar` of `/proc/self/io`), so the test can tell whether the file part was read to its end
/// after the writes had failed.
///
/// Usage: `gentle-probe multipart-fsize <source-file> <destination-path> <max-file-bytes>`.
/// Prints one JSON line: `outcome` (`success` or `error`), `bytesRead`, `destinationExists`, and
/// the error's `description`.
enum MultipartUnderFileSizeLimit {
    struct Outcome: Encodable {
        var outcome: String
        var bytesRead: Int?
        var destinationExists: Bool
        var description: String?
    }

    /// `rchar` of `/proc/self/io`: the bytes this process's read calls returned.
    static func bytesRead() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("rchar:") {
            return Int(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    static func run(_ arguments: [String]) async -> Never {
        guard arguments.count == 3, let maxBytes = rlim_t(arguments[2]) else {
            FileHandle.standardError.write(
                Data("usage: gentle-probe multipart-fsize <source> <destination> <max-file-bytes>\n".utf8))
            exit(2)
        }
        FileSizeLimit.apply(maxBytes)
        let source = URL(fileURLWithPath: arguments[0])
        let destination = URL(fileURLWithPath: arguments[1])
        let form = MultipartForm(
            parts: ["video": .file(info: MultipartFileInfo(fileName: "v.bin", fileURL: source, mimeType: "x/y"))],
            boundary: "fsize-boundary")
        var outcome = Outcome(outcome: "success", destinationExists: false)
        let before = bytesRead()
        do {
            try form.writeBody(to: destination)
        } catch {
            outcome.outcome = "error"
            outcome.description = "\(error)"
        }
        if let before, let after = bytesRead() { outcome.bytesRead = after - before }
        outcome.destinationExists = FileManager.default.fileExists(atPath: destination.path)
        if let line = try? JSONEncoder().encode(outcome) {
            FileHandle.standardOutput.write(line + Data("\n".utf8))
        }
        exit(0)
    }
}
