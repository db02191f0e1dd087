import Foundation
import GentleNetworking
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The child of the disk-full tests: downloads one URL with the process's file size limited
/// (`RLIMIT_FSIZE`, so a write past it fails as a full disk would, and only in this process),
/// and prints one JSON line with what the download threw.
///
/// Usage: `gentle-probe download-fsize <curl|memory|engine> <url> <destination-path> <max-file-bytes>`;
/// `curl` is `CurlTransport.download` (libcurl's file sink), `memory` the download through
/// memory that pinned and decorated stacks use, `engine` Y-Network's default download of an
/// engine that implements only `submit`.
enum DownloadUnderFileSizeLimit {
    struct Outcome: Encodable {
        /// `success`, `cocoaError` or `otherError`.
        var outcome: String
        var cocoaCode: Int?
        var path: String?
        var underlyingErrno: Int32?
        var description: String?
    }

    /// An engine written to Y-Network's protocol: `submit` only, the download its default.
    struct SubmitOnlyEngine: NetworkEngine {
        let transport: CurlTransport
        func configure(with configuration: NetworkEngineConfiguration) {}
        func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
            let (data, response) = try await transport.data(for: request)
            return (data, response)
        }
    }

    static func run(_ arguments: [String]) async -> Never {
        guard arguments.count == 4, let url = URL(string: arguments[1]), let maxBytes = rlim_t(arguments[3]) else {
            FileHandle.standardError.write(
                Data(
                    "usage: gentle-probe download-fsize <curl|memory|engine> <url> <destination> <max-file-bytes>\n"
                        .utf8))
            exit(2)
        }
        FileSizeLimit.apply(maxBytes)
        let destination = URL(fileURLWithPath: arguments[2])
        var outcome = Outcome(outcome: "success")
        do {
            let transport = try CurlTransport()
            switch arguments[0] {
            case "memory":
                _ = try await transport.downloadThroughMemory(for: URLRequest(url: url), to: destination, progress: nil)
            case "engine":
                _ = try await SubmitOnlyEngine(transport: transport).download(
                    URLRequest(url: url), to: destination, progress: nil)
            default:
                _ = try await transport.download(for: URLRequest(url: url), to: destination)
            }
        } catch let error as CocoaError {
            outcome.outcome = "cocoaError"
            outcome.cocoaCode = error.code.rawValue
            outcome.path = error.userInfo[NSFilePathErrorKey] as? String
            outcome.underlyingErrno = (error.userInfo[NSUnderlyingErrorKey] as? POSIXError)?.code.rawValue
        } catch {
            outcome.outcome = "otherError"
            outcome.description = "\(error)"
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let line = try? encoder.encode(outcome) {
            FileHandle.standardOutput.write(line + Data("\n".utf8))
        }
        exit(0)
    }
}
