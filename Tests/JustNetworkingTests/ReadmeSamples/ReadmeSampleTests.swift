// The code samples of the JustNetworking README (seed 003), compiled as written and run.
//
// Deviations from the README text, each the smallest change that lets the sample compile:
// 1. The README declares `enum UserRouter` twice; the two live in `ReadmeSampleA` (global URL)
//    and `ReadmeSampleB` (own `baseURL`).
// 2. Sample B's `return URL(string:"https://www.anotherapi.com")` lacks a `!`: `URL(string:)` is
//    optional, so it cannot compile in any Swift. It reads `URL(string:"https://www.anotherapi.com")!`.
// 3. The `RequestType` sample is the library's own definition. It is compiled as a copy inside
//    `ReadmeRequestTypeSample` (a second top-level `RequestType` would shadow the library's), so its
//    extensions say `extension ReadmeRequestTypeSample.RequestType`. Its Decodable extension adds
//    `& SendableMetatype` (Swift 6.2+; the decoding closure is `@Sendable` and uses
//    `Response.self`), exactly as the library does.
// 4. The Void extension's parser `{ return () }` does not name its `Data` argument, which Swift
//    rejects ("contextual type for closure argument list expects 1 argument, which cannot be
//    implicitly ignored"): it reads `{ _ in return () }`.
// 5. The `Requester` sample is a method followed by a stray `}`: it is the body of
//    `struct AlamofireRequester: Requester { … }`. `Alamofire` is a small test-local stand-in
//    (`request(_:)`, `responseData(queue:)`, `.result`) backed by a real URLSession.
// 6. Statement samples (`setCurrentURL`, `compose`, `RequestFactory(…)`, `set(to:…)`) sit inside
//    test functions; expression results are bound with `let` so the test can assert on them.
// 7. (Not a change.) `networkServiceType` exists on Linux's URLRequest too, so the sample
//    `compose(set(…), set(to: \.networkServiceType, .background))` needs no `#if`.
// 8. swift format re-indented the samples (the README's indentation is ragged), and the
//    `public` declarations of the copies carry `///` comments, which the lint requires.
import Foundation
import GentleNetworkingTesting
import JustNetworking
import Testing

// MARK: - Router, sample A: the global base URL (verbatim)

enum ReadmeSampleA {
    enum UserRouter: Router {
        case user(id: String)

        var route: Route {
            switch self {
            case .user(let id):
                return Route(path: "user\(id)", method: .get)
            }
        }
    }
}

// MARK: - Router, sample B: a base URL of its own (fix: the missing `!`)

enum ReadmeSampleB {
    enum UserRouter: Router {
        case user(id: String)

        var route: Route {
            switch self {
            case .user(let id):
                return Route(path: "user/\(id)", method: .get)
            }
        }

        var baseURL: URL {
            return URL(string: "https://www.anotherapi.com")!
        }
    }
}

// MARK: - Request: the README's RequestType (a copy; see deviation 3)

enum ReadmeRequestTypeSample {
    /// The README's `RequestType`.
    public struct RequestType<Response>: Request {

        /// The README's `responseQueue`.
        public let responseQueue: DispatchQueue

        /// The README's `requestParser`.
        public let requestParser: RequestParser<Response>

        /// The README's `requestFactory`.
        public let requestFactory: RequestFactory

        /// The README's designated initialiser.
        public init(
            responseQueue: DispatchQueue = .global(qos: .default),
            requestFactory: RequestFactory,
            requestParser: @escaping RequestParser<Response>
        ) {
            self.responseQueue = responseQueue
            self.requestParser = requestParser
            self.requestFactory = requestFactory
        }
    }
}

#if compiler(>=6.2)
    extension ReadmeRequestTypeSample.RequestType where Response: Decodable & SendableMetatype {

        init(
            responseQueue: DispatchQueue = .global(qos: .default),
            requestFactory: RequestFactory,
            decoder: JSONDecoder = JSONDecoder()
        ) {
            self.init(responseQueue: responseQueue, requestFactory: requestFactory) {
                return try decoder.decode(Response.self, from: $0)
            }
        }
    }
#else
    extension ReadmeRequestTypeSample.RequestType where Response: Decodable {

        init(
            responseQueue: DispatchQueue = .global(qos: .default),
            requestFactory: RequestFactory,
            decoder: JSONDecoder = JSONDecoder()
        ) {
            self.init(responseQueue: responseQueue, requestFactory: requestFactory) {
                return try decoder.decode(Response.self, from: $0)
            }
        }
    }
#endif

extension ReadmeRequestTypeSample.RequestType where Response == Void {

    init(
        responseQueue: DispatchQueue = .global(qos: .default),
        requestFactory: RequestFactory
    ) {
        self.init(responseQueue: responseQueue, requestFactory: requestFactory) { _ in
            return ()
        }
    }
}

// MARK: - Requester: the README's Alamofire-based implementation (verbatim body)

struct AlamofireRequester: Requester {
    /// The README's `execute(_:response:)`.
    public func execute<T: Request>(_ request: T, response: @escaping Response<T.Response>) {

        let urlRequest = request.urlRequest
        Alamofire.request(urlRequest)
            .responseData(queue: request.responseQueue) {
                switch $0.result {
                case .success(let data):
                    do {
                        response(.success(try request.parser(data)))
                    } catch {
                        response(.failure(error))
                    }
                case .failure(let error):
                    response(.failure(error))
                }
            }
    }
}

/// The slice of Alamofire the README's requester uses, over a real URLSession. Like Alamofire
/// without `validate()`, any HTTP status is a success carrying the body.
enum Alamofire {
    static let session = makeIsolatedSession()

    static func request(_ urlRequest: URLRequest) -> DataRequest {
        DataRequest(urlRequest: urlRequest)
    }

    struct DataRequest: Sendable {
        let urlRequest: URLRequest

        @discardableResult
        func responseData(
            queue: DispatchQueue, completionHandler: @escaping @Sendable (DataResponse) -> Void
        ) -> DataRequest {
            Alamofire.session.dataTask(with: urlRequest) { data, _, error in
                let result: Result<Data, any Error> = error.map { .failure($0) } ?? .success(data ?? Data())
                queue.async { completionHandler(DataResponse(result: result)) }
            }
            .resume()
            return self
        }
    }

    struct DataResponse: Sendable {
        let result: Result<Data, any Error>
    }
}

// MARK: - The samples, run

extension GlobalBaseURLTests {
    /// The samples that set the global base URL; nested in the serialized global suite.
    @Suite("README samples: the global base URL")
    struct ReadmeGlobalURLSamples {
        @Test("Router sample A on the global URL, and the compose and RequestFactory samples")
        func routerOnGlobalURL() throws {
            defer { NetworkConfiguration.reset() }
            NetworkConfiguration.setCurrentURL(URL(string: "https://www.myApi.com")!)

            // Sample A's path is "user\(id)", with no slash, so the id is glued to "user".
            #expect(
                ReadmeSampleA.UserRouter.user(id: "12").completeURL.absoluteString == "https://www.myApi.com/user12")
            #expect(ReadmeSampleA.UserRouter.user(id: "12").routeDescription == "GET user12")

            let requestBuilder = compose(addURLParams(["years": "2015"]), addHeaders(["Authorization": "Bearer...."]))
            let factory = RequestFactory(
                router: ReadmeSampleA.UserRouter.user(id: "12"), requestBuilder: requestBuilder)

            let request = try factory.makeURLRequest()
            #expect(request.url?.absoluteString == "https://www.myApi.com/user12?years=2015")
            #expect(request.httpMethod == "GET")
            #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer....")
            #expect(request.allHTTPHeaderFields?.count == 1)
        }

        @Test("Router sample A with no URL set fails with baseURLNotSet instead of crashing")
        func routerWithoutGlobalURL() {
            NetworkConfiguration.reset()
            #expect(throws: JustNetworkingError.baseURLNotSet(router: "GET user12")) {
                try RequestFactory(router: ReadmeSampleA.UserRouter.user(id: "12")).makeURLRequest()
            }
        }
    }
}

@Suite("README samples")
struct ReadmeSampleTests {
    @Test("Router sample B uses its own base URL, whatever the global one")
    func routerWithOwnBaseURL() throws {
        let factory = RequestFactory(
            router: ReadmeSampleB.UserRouter.user(id: "12"),
            requestBuilder: compose(addURLParams(["years": "2015"]), addHeaders(["Authorization": "Bearer...."])))

        let request = try factory.makeURLRequest()

        #expect(
            ReadmeSampleB.UserRouter.user(id: "12").completeURL.absoluteString == "https://www.anotherapi.com/user/12")
        #expect(request.url?.absoluteString == "https://www.anotherapi.com/user/12?years=2015")
        #expect(request.httpMethod == "GET")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer....")
    }

    @Test("The set(to:) samples change the cache policy and the network service type")
    func setSamples() throws {
        let base = try RequestFactory(router: ReadmeSampleB.UserRouter.user(id: "12")).makeURLRequest()
        #expect(base.cachePolicy == .useProtocolCachePolicy)
        #expect(base.networkServiceType == .default)

        let cachePolicy = set(to: \.cachePolicy, .reloadIgnoringCacheData)

        let both = compose(set(to: \.cachePolicy, .reloadIgnoringCacheData), set(to: \.networkServiceType, .background))

        #expect(cachePolicy(base).cachePolicy == .reloadIgnoringCacheData)
        #expect(cachePolicy(base).networkServiceType == .default)
        #expect(both(base).cachePolicy == .reloadIgnoringCacheData)
        #expect(both(base).networkServiceType == .background)
        #expect(both(base).url == base.url)
    }

    @Test("The README's Alamofire requester runs the README's RequestType over real sockets")
    func alamofireRequester() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/user/12") { _ in .json(#"{"id":"12","name":"Ada"}"#) }
        server.route("DELETE", "/user/12") { _ in .status(204) }
        server.route("GET", "/text") { _ in .text("hello") }
        let marked = MarkedQueue()
        let requester = AlamofireRequester()

        let decoded = await deliver(
            ReadmeRequestTypeSample.RequestType<User>(
                responseQueue: marked.queue,
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "user/12"))),
            via: requester, checking: marked)
        let void = await deliver(
            ReadmeRequestTypeSample.RequestType<Void>(
                responseQueue: marked.queue,
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "user/12", .delete))),
            via: requester, checking: marked)
        let parsed = await deliver(
            ReadmeRequestTypeSample.RequestType<Int>(
                responseQueue: marked.queue,
                requestFactory: RequestFactory(router: FixedBaseRouter(server.baseURL, "text"))
            ) { data in
                throw ParserFailure(reason: String(decoding: data, as: UTF8.self))
            },
            via: requester, checking: marked)

        #expect(decoded.value == User(id: "12", name: "Ada"))
        #expect(decoded.onResponseQueue)
        #expect(void.error == nil)
        #expect(void.onResponseQueue)
        #expect(parsed.error as? ParserFailure == ParserFailure(reason: "hello"))
        #expect(server.receivedRequests.map(\.description) == ["GET /user/12", "DELETE /user/12", "GET /text"])
    }

    @Test("The library's own requesters run the README's RequestType too", arguments: RequesterKind.allCases)
    func readmeRequestTypeOnShippedRequesters(kind: RequesterKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/user/12") { request in
            .json(#"{"id":"12","name":"\#(request.queryValue("years") ?? "-")"}"#)
        }
        let marked = MarkedQueue()
        let request = ReadmeRequestTypeSample.RequestType<User>(
            responseQueue: marked.queue,
            requestFactory: RequestFactory(
                router: FixedBaseRouter(server.baseURL, "user/12"), requestBuilder: addURLParams(["years": "2015"])))

        let delivery = await deliver(request, via: kind.make(), checking: marked)

        #expect(delivery.value == User(id: "12", name: "2015"))
        #expect(server.requests(path: "/user/12").map(\.rawQuery) == ["years=2015"])
    }
}
