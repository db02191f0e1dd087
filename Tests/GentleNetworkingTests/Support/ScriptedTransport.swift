import Foundation

@testable import GentleNetworking

/// A transport that answers from a script of outcomes (the last one repeats) and records every
/// request it was sent: for unit tests of decorators.
final class ScriptedTransport: HTTPTransportProtocol {
    enum Step: Sendable {
        case status(Int, headers: [String: String] = [:], body: String = "")
        case failure(any Error)
    }

    private let script: Locked<[Step]>
    private let requests = Locked<[URLRequest]>([])

    init(_ script: [Step]) {
        self.script = Locked(script)
    }

    var sent: [URLRequest] { requests.current }

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        requests.withLock { $0.append(request) }
        let step = script.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
        switch step {
        case .status(let code, let headers, let body):
            return try CannedResponse(string: body, statusCode: code, headerFields: headers).makeResponse(for: request)
        case .failure(let error):
            throw error
        }
    }
}

/// A retry clock that never sleeps: it records the delays asked for and returns at once.
final class RecordingClock: Sendable {
    private let delays = Locked<[TimeInterval]>([])
    let fixedNow: Date
    let randomUnit: Double

    init(now: Date = Date(timeIntervalSince1970: 1_700_000_000), randomUnit: Double = 0.5) {
        self.fixedNow = now
        self.randomUnit = randomUnit
    }

    var recordedDelays: [TimeInterval] { delays.current }

    var clock: RetryClock {
        RetryClock(
            now: { [fixedNow] in fixedNow },
            sleep: { [delays] seconds in
                delays.withLock { $0.append(seconds) }
                try Task.checkCancellation()
            },
            randomUnit: { [randomUnit] in randomUnit })
    }
}

func request(
    _ method: String = "GET", _ url: String = "https://h.example/r", headers: [String: String] = [:]
)
    -> URLRequest
{
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return request
}
