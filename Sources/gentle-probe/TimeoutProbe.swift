import Foundation
import GentleNetworking
import JustNetworking
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The child of the "any Double is a safe timeout" tests of the sessions a caller hands in:
/// sends one GET and prints one JSON line with its outcome. Before its fix, a value corelibs
/// converts to an integer (NaN, infinity) killed this process.
///
/// Usage: `gentle-probe timeout <mode> <url> <seconds>`, the mode one of:
/// - `transport`: a `URLSessionTransport` over a session whose configuration's
///   `timeoutIntervalForRequest` is `<seconds>`; `transport-delegate` the same session with a
///   delegate of its own;
/// - `justnetworking-delegate`: JustNetworking's `URLSession` requester over a session with a
///   delegate of its own and a request whose `timeoutInterval` is `<seconds>`;
///   `justnetworking-delegate-session` the same with the session's configuration's
///   `timeoutIntervalForRequest` at `<seconds>` instead;
/// - `ynetwork-background`: Y-Network's `submitBackgroundDownload` on an engine configured with a
///   session delegate, a request whose `timeoutInterval` is `<seconds>`; it prints the status
///   the delegate saw (or the error);
/// - `ynetwork-stub-engine`: Y-Network's `URLProtocolStubNetworkEngine` with no protocol classes
///   (its requests reach the network), a request whose `timeoutInterval` is `<seconds>`;
/// - `transport-cookies`: a `URLSessionTransport` over the default configuration (which accepts
///   cookies), `<seconds>` unused; it prints the status. corelibs parsed a `Set-Cookie` it
///   trapped on before any delegate saw the response.
enum TimeoutProbe {
    struct Outcome: Encodable {
        /// `success`, `error`.
        var outcome: String
        var status: Int?
        var error: String?
    }

    private final class PlainDelegate: NSObject, URLSessionTaskDelegate, Sendable {}

    /// Reports the status of the first task that completes.
    private final class DownloadDelegate: NSObject, URLSessionDownloadDelegate, Sendable {
        let done = Locked<CheckedContinuation<Outcome, Never>?>(nil)

        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
        ) {}

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let status = (task.response as? HTTPURLResponse)?.statusCode
            let outcome =
                error.map { Outcome(outcome: "error", error: "\(type(of: $0))") }
                ?? Outcome(outcome: "success", status: status)
            done.withLock { continuation in
                defer { continuation = nil }
                return continuation
            }?.resume(returning: outcome)
        }
    }

    private struct BaseRouter: Router {
        let baseURL: URL
        let route: Route
    }

    static func run(_ arguments: [String]) async -> Never {
        guard arguments.count == 3, let url = URL(string: arguments[1]), let seconds = Double(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: gentle-probe timeout <mode> <url> <seconds>\n".utf8))
            exit(2)
        }
        var outcome = Outcome(outcome: "success")
        let configuration = URLSessionConfiguration.ephemeral
        switch arguments[0] {
        case "justnetworking-delegate", "justnetworking-delegate-session":
            let onSession = arguments[0] == "justnetworking-delegate-session"
            if onSession { configuration.timeoutIntervalForRequest = seconds }
            let session = URLSession(configuration: configuration, delegate: PlainDelegate(), delegateQueue: nil)
            let factory = RequestFactory(
                router: BaseRouter(
                    baseURL: url.deletingLastPathComponent(), route: Route(path: url.lastPathComponent, method: .get)),
                requestBuilder: set(to: \.timeoutInterval, onSession ? 0 : seconds))
            let result: Result<Void, any Error> = await withCheckedContinuation { continuation in
                session.execute(RequestType<Void>(requestFactory: factory)) { continuation.resume(returning: $0) }
            }
            if case .failure(let error) = result {
                outcome = Outcome(outcome: "error", error: "\(type(of: error))")
            }
        case "ynetwork-background":
            let delegate = DownloadDelegate()
            let engine = URLNetworkEngine()
            var engineConfiguration = NetworkEngineConfiguration()
            engineConfiguration.sessionDelegate = delegate
            engine.configure(with: engineConfiguration)
            var request = URLRequest(url: url)
            request.timeoutInterval = seconds
            outcome = await withCheckedContinuation { continuation in
                delegate.done.withLock { $0 = continuation }
                do {
                    try engine.submitBackgroundDownload(request)
                } catch {
                    delegate.done.withLock { pending in
                        defer { pending = nil }
                        return pending
                    }?.resume(returning: Outcome(outcome: "error", error: "\(type(of: error))"))
                }
            }
        case "ynetwork-stub-engine":
            // The stub engine with no stubbing protocol: requests reach the network.
            let engine = URLProtocolStubNetworkEngine(protocolClasses: [])
            engine.configure(with: NetworkEngineConfiguration())
            var request = URLRequest(url: url)
            request.timeoutInterval = seconds
            do {
                let (_, response) = try await engine.submit(request)
                outcome.status = (response as? HTTPURLResponse)?.statusCode
            } catch {
                outcome = Outcome(outcome: "error", error: "\(type(of: error))")
            }
        case "transport-cookies":
            do {
                let (_, response) = try await URLSessionTransport(session: URLSession(configuration: .default))
                    .data(for: URLRequest(url: url))
                outcome.status = response.statusCode
            } catch {
                outcome = Outcome(outcome: "error", error: "\(error)")
            }
        default:
            configuration.timeoutIntervalForRequest = seconds
            let delegate: PlainDelegate? = arguments[0] == "transport-delegate" ? PlainDelegate() : nil
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            do {
                let (_, response) = try await URLSessionTransport(session: session).data(for: URLRequest(url: url))
                outcome.status = response.statusCode
            } catch let error as TransportError {
                outcome = Outcome(outcome: "error", error: "\(error.code)")
            } catch {
                outcome = Outcome(outcome: "error", error: "\(type(of: error))")
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let line = try? encoder.encode(outcome) {
            FileHandle.standardOutput.write(line + Data("\n".utf8))
        }
        exit(0)
    }
}
