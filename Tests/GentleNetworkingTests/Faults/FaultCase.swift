import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What one exchange ended with, as the fault table prints it.
enum FaultOutcome: Equatable, Sendable, CustomStringConvertible {
    /// An HTTP response with this status.
    case status(Int)
    /// A ``TransportError`` (or a `NetworkError` wrapping one) with this code.
    case transport(TransportError.Code)
    /// Anything else: a crash-free but unexpected error, described.
    case unexpected(String)

    init(_ result: Result<(Data, HTTPURLResponse), any Error>) {
        switch result {
        case .success(let (_, response)): self = .status(response.statusCode)
        case .failure(let error): self = FaultOutcome(error: error)
        }
    }

    init(error: any Error) {
        if let code = transportCode(error) {
            self = .transport(code)
        } else {
            self = .unexpected("\(type(of: error)): \(error)")
        }
    }

    var description: String {
        switch self {
        case .status(let code): "\(code)"
        case .transport(let code): "`.\(code)`"
        case .unexpected(let text): "unexpected: \(text.prefix(120))"
        }
    }
}

/// What a case saw: the outcome, and any broken promise besides it (a credential that crossed
/// an origin, a request byte that reached a server it should not have).
struct FaultObservation: Sendable {
    var outcome: FaultOutcome
    var problems: [String] = []
    /// What the row adds to the outcome in the table (such as "retried after 0 s").
    var note: String = ""
}

/// One row of the fault table: a misbehaving peer (or a careless call), what every transport
/// must end with, and how to provoke it against a transport of a given kind.
struct FaultCase: Sendable {
    let name: String
    let expected: FaultOutcome
    let run: @Sendable (TransportKind) async throws -> FaultObservation
    /// Transports known to leave descriptors behind in this case, and why: reported in the
    /// table, bounded by ``knownLeakBound``, and documented in the README.
    var knownLeaks: [TransportKind: String] = [:]
    /// The most descriptors a known leak may leave per run.
    static let knownLeakBound = 2

    init(
        _ name: String, expect expected: FaultOutcome,
        run: @escaping @Sendable (TransportKind) async throws -> FaultObservation
    ) {
        self.name = name
        self.expected = expected
        self.run = run
    }

    /// This case, with a known leak on `kind`.
    func knownLeak(on kind: TransportKind, _ reason: String) -> FaultCase {
        var copy = self
        copy.knownLeaks[kind] = reason
        return copy
    }

    /// A case against one ``HostileServer`` route: `behavior` answers `GET /fault`.
    static func hostile(
        _ name: String, _ behavior: HostileBehavior, expect expected: FaultOutcome,
        limits: ResponseLimits = ResponseLimits(), totalTimeout: TimeInterval? = nil, idleTimeout: TimeInterval = 30
    ) -> FaultCase {
        FaultCase(name, expect: expected) { kind in
            let server = try HostileServer()
            defer { server.shutdown() }
            server.route("/fault", behavior)
            let transport = try makeHostileTransport(kind, limits: limits, totalTimeout: totalTimeout)
            var request = URLRequest(url: server.url("/fault"))
            request.timeoutInterval = idleTimeout
            return FaultObservation(outcome: await FaultOutcome(result(of: request, on: transport)))
        }
    }
}

/// Sends `request` and captures the result, whatever it is.
func result(
    of request: URLRequest, on transport: any HTTPTransportProtocol
) async -> Result<(Data, HTTPURLResponse), any Error> {
    do {
        return .success(try await transport.data(for: request))
    } catch {
        return .failure(error)
    }
}

/// A row of the printed table: a case's outcome on every transport, the slowest time, and the
/// descriptors and threads left over after it.
struct FaultRow: Sendable {
    let name: String
    let expected: FaultOutcome
    var knownLeaks: [TransportKind: String] = [:]
    var outcomes: [TransportKind: FaultObservation] = [:]
    var slowest: TimeInterval = 0
    /// What a case left when its own threads had ended (or 20 s had passed), against the counts
    /// before it.
    struct Leftover {
        var descriptors: Int
        /// Threads other than libdispatch's pool workers: none may be left, on any transport.
        var threads: Int
        /// libdispatch's pool workers (see ``ProcessResources/poolWorkers``): shared by the whole
        /// process, so not held against a case. corelibs' URLSession runs every transfer on the
        /// pool and keeps working on one it was told to cancel (measured: it reads and inflates
        /// the rest of a compression bomb), and launching nginx through corelibs' `Process` uses
        /// it too; a worker then exits once idle, often only after a 20 s wait (CI: after a bomb,
        /// an endless body, and a TLS case on `CurlTransport`). The end of the table requires
        /// every one of them gone (``FaultTableTests``).
        var poolWorkers: Int
    }

    var leftover: [TransportKind: Leftover] = [:]
    /// For a transport that left something over: which descriptors and threads appeared.
    var leakDetails: [TransportKind: String] = [:]
    /// How long the wait for the counts to settle took after each transport's run.
    var settling: [TransportKind: TimeInterval] = [:]

    func cell(_ kind: TransportKind) -> String {
        guard let observed = outcomes[kind] else { return "n/a" }
        var text = observed.outcome == expected ? observed.outcome.description : "**\(observed.outcome)**"
        if !observed.note.isEmpty { text += ", \(observed.note)" }
        if !observed.problems.isEmpty { text += " **\(observed.problems.joined(separator: "; "))**" }
        return text
    }

    func leaks(_ kind: TransportKind) -> String {
        guard let left = leftover[kind] else { return "n/a" }
        if left.descriptors <= 0 && left.threads <= 0 {
            return "none"
        }
        let figure = "+\(max(0, left.descriptors)) fd, +\(max(0, left.threads)) threads"
        return knownLeaks[kind] != nil ? "\(figure) on \(kind) (known, see below)" : "**\(figure) on \(kind)**"
    }
}
