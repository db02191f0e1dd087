import Foundation
import GentleNetworking
import GentleNetworkingTesting

/// The README's endpoints.
enum DemoEndpoint: EndpointProtocol {
    case signIn(username: String, password: String)
    case model(id: Int)
    case models

    var path: String {
        switch self {
        case .signIn: "/api/signIn"
        case .model(let id): "/api/model/\(id)"
        case .models: "/api/models"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .signIn: .post
        case .model, .models: .get
        }
    }

    var query: [URLQueryItem]? { nil }

    var body: [String: EndpointAnyEncodable]? {
        switch self {
        case .signIn(let username, let password):
            ["username": EndpointAnyEncodable(username), "password": EndpointAnyEncodable(password)]
        case .model, .models: nil
        }
    }

    var requiresAuth: Bool {
        switch self {
        case .model, .models: true
        case .signIn: false
        }
    }
}

struct AuthTokenModel: Decodable, Sendable {
    let token: String
}

struct Model: Codable, Sendable {
    let id: Int
    let property: String
}

/// The embedded API the demo talks to by default: the README's three endpoints on a loopback
/// server, with the token checked on every protected call.
enum EmbeddedAPI {
    static let token = "demo-token-\(UUID().uuidString.prefix(8))"

    static func start() throws -> LoopbackServer {
        let server = try LoopbackServer()
        server.route("POST", "/api/signIn") { request in
            guard request.jsonObject?["username"] as? String == "user",
                request.jsonObject?["password"] as? String == "pass"
            else {
                return .json(#"{"error":"bad credentials"}"#, status: 401)
            }
            return .json(#"{"token":"\#(token)"}"#)
        }
        server.route("GET", prefix: "/api/model/") { request in
            guard request.bearerToken == token else { return .json(#"{"error":"unauthorized"}"#, status: 401) }
            guard let id = Int(request.path.dropFirst("/api/model/".count)) else {
                return .json(#"{"error":"not found"}"#, status: 404)
            }
            return .json(encoding: Model(id: id, property: "model #\(id)"))
        }
        server.route("GET", "/api/models") { request in
            guard request.bearerToken == token else { return .json(#"{"error":"unauthorized"}"#, status: 401) }
            return .json(encoding: (1...3).map { Model(id: $0, property: "model #\($0)") })
        }
        addResilienceRoutes(to: server)
        return server
    }

    /// The token `/api/profile` accepts; `/api/refresh` replaces it.
    static let profileToken = Locked("rotated-0")
    /// How many 304s `/api/catalog` answered.
    static let notModifiedCount = Locked(0)

    /// The streamed answer's tokens.
    static let answerTokens = [
        "Stream", "ing", " arrives", " token", " by", " token", ",", " as", " it", " is", " made", ".",
    ]

    /// The answer's events from token `start` on, each with its number as its id.
    static func answerEvents(from start: Int) -> [String] {
        // A client's `Last-Event-ID` of -1 asked for a negative drop, which traps.
        answerTokens.enumerated().dropFirst(max(0, start)).map { index, token in "id: \(index + 1)\ndata: \(token)\n\n"
        }
    }

    /// Endpoints for the resilience steps: a flaky one, one behind a rotating token, and one
    /// with an ETag.
    static func addResilienceRoutes(to server: LoopbackServer) {
        server.route(
            "GET", "/api/flaky",
            handler: LoopbackServer.sequence([
                .json(#"{"error":"busy"}"#, status: 503), .json(#"{"error":"busy"}"#, status: 503),
                .json(encoding: Model(id: 42, property: "recovered")),
            ]))
        server.route("POST", "/api/refresh") { _ in
            let next = profileToken.withLock { token -> String in
                let number = Int(token.split(separator: "-").last ?? "0") ?? 0
                token = "rotated-\(number + 1)"
                return token
            }
            return LoopbackResponse.json(#"{"token":"\#(next)"}"#).with { $0.delayBeforeHeaders = 0.2 }
        }
        server.route("GET", "/api/profile") { request in
            guard request.bearerToken == profileToken.current else {
                return .json(#"{"error":"token expired"}"#, status: 401)
            }
            return .json(encoding: Model(id: 1, property: "profile"))
        }
        // An LLM-style answer, one token per event; `/api/answer-resumable` drops the connection
        // after the first part and resumes after the `Last-Event-ID` it is sent back.
        server.route("GET", "/api/answer") { _ in
            .eventStream(answerEvents(from: 0) + ["event: done\ndata: [DONE]\n\n"], delay: 0.04)
        }
        server.route("GET", "/api/answer-resumable") { request in
            let resumeAfter = request.header("Last-Event-ID").flatMap { Int($0) } ?? 0
            if resumeAfter >= answerTokens.count { return .status(204) }  // nothing left: EventSource stops
            let events = answerEvents(from: resumeAfter)
            return resumeAfter == 0
                ? .eventStream(["retry: 300\n\n"] + events, delay: 0.04, closeAfter: 5)  // drops mid-answer
                : .eventStream(events, delay: 0.04)
        }
        server.route("GET", "/api/catalog") { request in
            let etag = "\"catalog-v1\""
            if request.header("If-None-Match") == etag {
                notModifiedCount.withLock { $0 += 1 }
                return LoopbackResponse.status(304).adding(header: "ETag", etag)
            }
            return LoopbackResponse.json(encoding: (1...50).map { Model(id: $0, property: "item \($0)") })
                .adding(header: "ETag", etag)
        }
    }
}
