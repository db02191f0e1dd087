import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A child process for tests that must not take the test run down: sends one request to a
/// (hostile) server through `HTTPNetworkService` over the named transport, and prints one JSON
/// line with the outcome, the elapsed time and the peak resident memory.
///
/// Usage: `gentle-probe <curl|urlsession> <url> <max-body-bytes>`
///
/// With `persist-writer` as its first argument it is instead the writer of the kill -9 tests
/// (see ``PersistenceWriter``); with `download-fsize`, a download under a file size limit (see
/// ``DownloadUnderFileSizeLimit``); with `timeout`, one request with a session or request
/// timeout corelibs could trap on (see ``TimeoutProbe``); with `pinned-anchors`, one request
/// through pinned certificates as the only trust anchors (see ``PinnedAnchorsProbe``); with
/// `multipart-fsize`, a multipart body written under a file size limit (see
/// ``MultipartUnderFileSizeLimit``).
@main
struct GentleProbe {
    struct Outcome: Encodable {
        var outcome: String
        var kind: String?
        var bytes: Int?
        var seconds: Double
        var peakKiB: Int
    }

    static func main() async {
        let arguments = CommandLine.arguments
        if arguments.count > 1, arguments[1] == "persist-writer" {
            await PersistenceWriter.run(Array(arguments.dropFirst(2)))
        }
        if arguments.count > 1, arguments[1] == "download-fsize" {
            await DownloadUnderFileSizeLimit.run(Array(arguments.dropFirst(2)))
        }
        if arguments.count > 1, arguments[1] == "multipart-fsize" {
            await MultipartUnderFileSizeLimit.run(Array(arguments.dropFirst(2)))
        }
        if arguments.count > 1, arguments[1] == "timeout" {
            await TimeoutProbe.run(Array(arguments.dropFirst(2)))
        }
        if arguments.count > 1, arguments[1] == "pinned-anchors" {
            await PinnedAnchorsProbe.run(Array(arguments.dropFirst(2)))
        }
        guard arguments.count == 4, let url = URL(string: arguments[2]), let limit = Int64(arguments[3]) else {
            FileHandle.standardError.write(Data("usage: gentle-probe <curl|urlsession> <url> <max-body-bytes>\n".utf8))
            exit(2)
        }
        let limits = ResponseLimits(maxBodyBytes: limit)
        let transport: any HTTPTransportProtocol
        switch arguments[1] {
        case "urlsession":
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            transport = URLSessionTransport(session: URLSession(configuration: configuration), limits: limits)
        default:
            #if canImport(CCurl)
                do {
                    transport = try CurlTransport(configuration: CurlTransport.Configuration(limits: limits))
                } catch {
                    FileHandle.standardError.write(Data("no libcurl: \(error)\n".utf8))
                    exit(2)
                }
            #else
                transport = URLSessionTransport(limits: limits)
            #endif
        }
        let service = HTTPNetworkService(transport: transport)
        let environment = DefaultAPIEnvironment(baseURL: url.deletingLastPathComponent())
        let endpoint = Endpoint(path: url.lastPathComponent, method: .get, timeoutInterval: 60)
        let start = Date()
        var outcome = Outcome(outcome: "success", seconds: 0, peakKiB: 0)
        do {
            let (data, _) = try await service.requestData(to: endpoint, via: environment)
            outcome.bytes = data.count
        } catch let error as NetworkError {
            outcome.outcome = "networkError"
            outcome.kind = "\(error.kind)"
        } catch {
            outcome.outcome = "otherError"
            outcome.kind = "\(type(of: error))"
        }
        outcome.seconds = Date().timeIntervalSince(start)
        outcome.peakKiB = peakResidentKiB()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let line = try? encoder.encode(outcome) {
            FileHandle.standardOutput.write(line + Data("\n".utf8))
        }
    }

    /// `VmHWM` from /proc/self/status: the peak resident set, in KiB (0 where unavailable).
    static func peakResidentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}
