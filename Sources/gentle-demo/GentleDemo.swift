import Foundation
import GentleNetworking
import GentleNetworkingTesting

/// `swift run gentle-demo [--base-url URL] [--username U] [--password P]`
///
/// Walks through the README story against the embedded loopback API (or a real one): sign in,
/// save the token, fetch one model, fetch a list, then the canned transports. Every request is
/// traced through the library's redacting logger.
@main
struct GentleDemo {
    struct Options {
        var baseURL: URL?
        var username = "user"
        var password = "pass"
    }

    static func main() async {
        do {
            let options = try parse(Array(CommandLine.arguments.dropFirst()))
            try await run(options)
        } catch {
            FileHandle.standardError.write(Data("gentle-demo: \(error)\n".utf8))
            exit(1)
        }
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--base-url":
                guard let value = iterator.next(), let url = URL(string: value), url.scheme != nil else {
                    throw DemoError("--base-url needs an absolute URL, such as https://api.example.com")
                }
                options.baseURL = url
            case "--username":
                guard let value = iterator.next() else { throw DemoError("--username needs a value") }
                options.username = value
            case "--password":
                guard let value = iterator.next() else { throw DemoError("--password needs a value") }
                options.password = value
            case "-h", "--help":
                print("usage: gentle-demo [--base-url URL] [--username U] [--password P]")
                exit(0)
            default:
                throw DemoError("unknown argument \(argument); try --help")
            }
        }
        return options
    }

    static func run(_ options: Options) async throws {
        var server: LoopbackServer?
        defer { server?.shutdown() }
        let baseURL: URL
        if let url = options.baseURL {
            baseURL = url
            print("GentleNetworking demo against \(url)")
        } else {
            let embedded = try EmbeddedAPI.start()
            server = embedded
            baseURL = embedded.baseURL
            print("GentleNetworking demo against the embedded API at \(baseURL)")
        }

        // A directory only this user can enter, with a name nobody could guess and take first
        // (mkdtemp): a predictable /tmp name could be made by another user beforehand.
        let runDirectory = try privateTemporaryDirectory("gentle-demo")
        let credentialsDirectory = runDirectory.appendingPathComponent("gentle-networking")
        defer { try? FileManager.default.removeItem(at: runDirectory) }
        let keyChainAuthService = SystemKeyChainAuthService(
            fileStore: FileCredentialStore(directory: credentialsDirectory))
        // Every record of the run also goes into a HAR file, written at the end.
        let har = HARRecorder(creatorName: "gentle-demo")
        let logger = ClosureNetworkLogger { record in
            har.log(record)
            switch record.event {
            case .request:
                let auth = record.headers["Authorization"].map { "  [Authorization: \($0)]" } ?? ""
                print("    \(record)\(auth)")
            case .redirect, .retry, .refresh, .cache:
                // Each step the moment it happens: a retry's delay and reason, a refresh, a 304.
                print("    \(record)")
            case .response, .failure:
                print("    \(record)")
                // The timing breakdown of each exchange on the wire (every attempt and hop).
                for exchange in record.metrics?.transactions ?? [] {
                    print("      timing: \(exchange.summary)")
                }
            }
        }

        let networkService = HTTPNetworkService(authService: keyChainAuthService, logger: logger)
        let apiEnvironment = DefaultAPIEnvironment(baseURL: baseURL)

        step(1, "Sign in (POST, no auth required)")
        let authTokenModel: AuthTokenModel = try await networkService.request(
            to: DemoEndpoint.signIn(username: options.username, password: options.password), via: apiEnvironment)
        print("    decoded: AuthTokenModel(token: <\(authTokenModel.token.count) characters>)")

        step(2, "Save the token")
        try await keyChainAuthService.saveAccessToken(authTokenModel.token)
        if let file = keyChainAuthService.fileStore?.fileURL {
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            let mode = (attributes[.posixPermissions] as? NSNumber).map { String($0.intValue, radix: 8) } ?? "?"
            print("    stored in \(file.path) (mode 0\(mode), a temporary store for this demo)")
        }

        step(3, "Fetch one model (GET, bearer token attached)")
        let model: Model = try await networkService.request(to: DemoEndpoint.model(id: 123), via: apiEnvironment)
        // What a server sent is printed escaped: with --base-url it could hold terminal controls.
        print("    decoded: \(PrintableText.escaping(String(describing: model)))")

        step(4, "Fetch a list")
        let models: [Model] = try await networkService.requestModels(to: DemoEndpoint.models, via: apiEnvironment)
        print(
            "    decoded: \(models.count) models: "
                + PrintableText.escaping(models.map(\.property).joined(separator: ", ")))

        step(5, "A typed HTTP error keeps the server's payload")
        try await keyChainAuthService.deleteAccessToken()
        do {
            let _: Model = try await networkService.request(to: DemoEndpoint.model(id: 1), via: apiEnvironment)
            print("    unexpected success")
        } catch let error as NetworkError {
            print(
                "    caught: kind \(error.kind), body \(PrintableText.escaping(error.response?.bodyText ?? "<none>"))")
        }

        step(6, "Canned transports: no network at all")
        let canned = HTTPNetworkService(
            transport: CannedRoutesTransport(routes: [
                CannedRoute(
                    pattern: RequestPattern(method: .get, path: "/api/models"),
                    response: CannedResponse(string: #"[{"id": 1, "property": "canned"}]"#)),
                CannedRoute(
                    pattern: RequestPattern(method: .get, pathRegex: "^/api/model/\\d+$"),
                    response: CannedResponse(string: #"{"id": 7, "property": "canned one"}"#)),
            ]),
            authService: InMemoryAuthService(token: "canned"), logger: logger)
        let cannedEnvironment = DefaultAPIEnvironment(baseURL: URL(string: "https://api.company.com"))
        let cannedList: [Model] = try await canned.requestModels(to: DemoEndpoint.models, via: cannedEnvironment)
        let cannedOne: Model = try await canned.request(to: DemoEndpoint.model(id: 7), via: cannedEnvironment)
        print("    decoded: \(cannedList.map(\.property)) and \(cannedOne.property)")

        if let server {
            try await resilienceSteps(server: server, logger: logger)
            try await streamingSteps(server: server)
            print("\nThe embedded API received \(server.receivedRequests.count) requests:")
            for request in server.receivedRequests {
                print(
                    "    \(request.method) \(request.path)  Authorization: \(request.header("Authorization") == nil ? "none" : "Bearer …")"
                )
            }
        }
        writeHAR(har)
        print("\nDone.")
    }

    /// Steps 7–9: retry, shared refresh and revalidation, against the embedded API's special
    /// endpoints (a real API has none of them, so `--base-url` skips these).
    static func resilienceSteps(server: LoopbackServer, logger: any NetworkLogger) async throws {
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)

        step(7, "A flaky endpoint (503, 503, 200) recovered by RetryTransport")
        let retrying = HTTPNetworkService(
            transport: RetryTransport(
                inner: DefaultTransport.make(),
                policy: RetryPolicy(maxRetries: 3, baseDelay: 0.2, maxDelay: 2, jitter: .full)),
            authService: InMemoryAuthService(), logger: logger)
        let recovered: Model = try await retrying.request(
            to: Endpoint(path: "/api/flaky", method: .get), via: environment)
        print("    decoded: \(recovered.property) after \(server.requests(path: "/api/flaky").count) attempts")

        step(8, "An expired token: 5 concurrent 401s, one shared refresh")
        let auth = InMemoryAuthService(token: "rotated-0-expired")
        let refreshService = HTTPNetworkService(transport: URLSessionTransport(), authService: InMemoryAuthService())
        let reauth = ReauthTransport(
            inner: URLSessionTransport(), authService: auth,
            refreshToken: {
                struct Token: Decodable { let token: String }
                print("    ⟳ refreshing the token (once)")
                let fresh: Token = try await refreshService.request(
                    to: Endpoint(path: "/api/refresh", method: .post), via: environment)
                try await auth.saveAccessToken(fresh.token)
            })
        let profileService = HTTPNetworkService(transport: reauth, authService: auth, logger: logger)
        let profiles = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let profile: Model = try await profileService.request(
                        to: Endpoint(path: "/api/profile", method: .get, requiresAuth: true), via: environment)
                    return profile.property
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        let rejected = server.requests(path: "/api/profile").filter { $0.bearerToken == "rotated-0-expired" }.count
        print(
            "    \(profiles.count) requests succeeded; \(rejected) got 401 first; "
                + "the server saw \(server.requests(path: "/api/refresh").count) refresh")

        step(9, "A 304 revalidation through ETagTransport")
        let caching = HTTPNetworkService(
            transport: ETagTransport(inner: URLSessionTransport(session: URLSession(configuration: .ephemeral))),
            authService: InMemoryAuthService(), logger: logger)
        for round in 1...2 {
            let items: [Model] = try await caching.requestModels(
                to: Endpoint(path: "/api/catalog", method: .get), via: environment)
            let sent = server.requests(path: "/api/catalog").last?.header("If-None-Match") ?? "none"
            print("    round \(round): \(items.count) items; If-None-Match sent: \(sent)")
        }
        print(
            "    the server answered 304 \(EmbeddedAPI.notModifiedCount.current) time(s); the body came from the cache")
    }

    /// Steps 10–11: an answer streamed token by token over Server-Sent Events, and a dropped
    /// stream resumed with `Last-Event-ID`.
    static func streamingSteps(server: LoopbackServer) async throws {
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        let service = HTTPNetworkService(authService: InMemoryAuthService())

        step(10, "An answer streamed token by token (Server-Sent Events)")
        print("    ", terminator: "")
        var tokens = 0
        for try await event in try await service.serverSentEvents(
            to: Endpoint(path: "/api/answer", method: .get), via: environment)
        {
            if event.event == "done" { break }
            print(event.data, terminator: "")
            fflush(nil)  // every open stream: the token shows now, not at the next newline
            tokens += 1
        }
        print("\n    \(tokens) tokens, printed as they arrived")

        step(11, "A dropped stream resumed with Last-Event-ID (EventSource)")
        print("    ", terminator: "")
        var resumed: [String] = []
        for try await event in service.eventSource(
            to: Endpoint(path: "/api/answer-resumable", method: .get), via: environment)
        {
            print(event.data, terminator: "")
            fflush(nil)  // every open stream: the token shows now, not at the next newline
            resumed.append(event.data)
        }
        let connections = server.requests(path: "/api/answer-resumable")
        let sentIDs = connections.map { $0.header("Last-Event-ID") ?? "none" }
        print("\n    \(resumed.count) tokens over \(connections.count) connections; Last-Event-ID sent: \(sentIDs)")
    }

    /// A new directory in the temporary directory, owner-only, named `<prefix>-XXXXXX` by
    /// `mkdtemp`.
    static func privateTemporaryDirectory(_ prefix: String) throws -> URL {
        var template = Array(
            FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-XXXXXX").path.utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let made else { throw CocoaError(.fileWriteUnknown) }
        return URL(fileURLWithPath: made, isDirectory: true)
    }

    /// Writes the run's HAR file into a private directory of its own (kept after the run) and
    /// says where it is.
    static func writeHAR(_ har: HARRecorder) {
        do {
            let file = try privateTemporaryDirectory("gentle-demo-har").appendingPathComponent("run.har")
            try har.write(to: file)
            print("\nA HAR file of this run (\(har.entryCount) requests, redacted): \(file.path)")
            print("    open it in a browser's network panel (Import HAR) or any HAR viewer")
        } catch {
            print("\nThe HAR file could not be written: \(error)")
        }
    }

    static func step(_ number: Int, _ title: String) {
        print("\n\(number). \(title)")
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
