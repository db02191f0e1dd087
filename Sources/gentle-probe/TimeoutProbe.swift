import Foundation
import GentleNetworking
import JustNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The child of the "any Double is a safe timeout" tests of the sessions a caller hands in:
/// sends one GET and prints one JSON line with its outcome. Before its fix, a value corelibs
/// converts to an integer (NaN, infinity) killed this process.
///
/// Usage: `gentle-probe timeout <transport|transport-delegate|justnetworking-delegate> <url> <seconds>`:
/// `transport` is a `URLSessionTransport` over a session whose configuration's
/// `timeoutIntervalForRequest` is `<seconds>`, `transport-delegate` the same session with a
/// delegate of its own, `justnetworking-delegate` JustNetworking's `URLSession` requester over a
/// session with a delegate of its own and a request whose `timeoutInterval` is `<seconds>`.
enum TimeoutProbe {
    struct Outcome: Encodable {
        /// `success`, `error`.
        var outcome: String
        var status: Int?
        var error: String?
    }

    private final class PlainDelegate: NSObject, URLSessionTaskDelegate, Sendable {}

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
        case "justnetworking-delegate":
            let session = URLSession(configuration: configuration, delegate: PlainDelegate(), delegateQueue: nil)
            let factory = RequestFactory(
                router: BaseRouter(
                    baseURL: url.deletingLastPathComponent(), route: Route(path: url.lastPathComponent, method: .get)),
                requestBuilder: set(to: \.timeoutInterval, seconds))
            let result: Result<Void, any Error> = await withCheckedContinuation { continuation in
                session.execute(RequestType<Void>(requestFactory: factory)) { continuation.resume(returning: $0) }
            }
            if case .failure(let error) = result {
                outcome = Outcome(outcome: "error", error: "\(type(of: error))")
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
