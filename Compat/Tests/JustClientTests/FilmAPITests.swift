import Foundation
import JustNetworking
import XCTest

#if COMPAT_SWIFT5
    @testable import JustClient5
#else
    @testable import JustClient
#endif

final class FilmAPITests: XCTestCase {
    override func setUp() {
        super.setUp()
        configureFilmAPI(baseURL: URL(string: "https://films.example.com/api")!)
    }

    func testRoutersBuildTheirURLs() {
        XCTAssertEqual(FilmRouter.film(id: 4).completeURL.absoluteString, "https://films.example.com/api/films/4")
        XCTAssertEqual(FilmRouter.remove(id: 4).completeURL.absoluteString, "https://films.example.com/api/films/4")
        XCTAssertEqual(FilmRouter.rate(id: 1).method, .post)
        XCTAssertEqual(
            AssetRouter.poster(name: "a.png").completeURL.absoluteString, "https://cdn.example.com/v2/posters/a.png")
        XCTAssertEqual(HealthRouter().completeURL.absoluteString, "https://status.example.com/health")
        // As in JustNetworking, a router prints as its type does: an enum prints its case.
        XCTAssertEqual(describe(FilmRouter.films), "GET https://films.example.com/api/films (films)")
        XCTAssertEqual(configuredBaseURL(), URL(string: "https://films.example.com/api"))
        XCTAssertEqual(HTTPMethod.option.value, "OPTIONS")
    }

    func testFilmsRequestComposesItsBuilders() {
        let request = filmsRequest(token: "t0k", page: 2).urlRequest
        XCTAssertEqual(request.url?.absoluteString, "https://films.example.com/api/films?page=2")
        XCTAssertEqual(request.httpMethod, "GET")
        XCTAssertEqual(request.value(forHTTPHeaderField: "Authorization"), "Bearer t0k")
        XCTAssertEqual(request.value(forHTTPHeaderField: "Accept"), "application/json")
        XCTAssertEqual(request.timeoutInterval, 15)
        XCTAssertEqual(request.cachePolicy, .reloadIgnoringLocalCacheData)
        XCTAssertEqual(identity(request), request)
        XCTAssertEqual(setting(\.timeoutInterval, to: 3)(request).timeoutInterval, 3)
    }

    func testRateRequestCarriesAJSONBody() throws {
        let request = rateRequest(id: 7, rating: Rating(stars: 5), token: "x").urlRequest
        XCTAssertEqual(request.httpMethod, "POST")
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Type"), "application/json")
        let body = try XCTUnwrap(request.httpBody)
        XCTAssertEqual(String(decoding: body, as: UTF8.self), #"{"stars":5}"#)
    }

    func testServiceDecodesThroughAMockRequester() {
        let requester = MockRequester(json: filmsJSON)
        let service = FilmService(requester: requester, token: "abc")
        let done = expectation(description: "titles")
        service.loadTitles(page: 1) { result in
            XCTAssertEqual(try? result.get(), ["A New Hope", "Zoë"])
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        XCTAssertEqual(requester.sent.first?.url?.query, "page=1")
    }

    func testParserErrorsReachTheCallback() {
        let requester = MockRequester(json: "not json")
        let done = expectation(description: "failure")
        requester.execute(filmRequest(id: 1)) { result in
            if case .failure(let error) = result {
                XCTAssertTrue(error is DecodingError)
            } else {
                XCTFail("expected a decoding failure")
            }
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
    }

    func testVoidRequestThroughMock() {
        let requester = MockRequester(json: "")
        let service = FilmService(requester: requester, token: "abc")
        let done = expectation(description: "rated")
        service.rate(id: 3, stars: 4) { result in
            if case .failure(let error) = result { XCTFail("\(error)") }
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
    }

    func testCustomRequestOnItsQueue() {
        let queue = DispatchQueue(label: "health")
        let requester = MockRequester(json: "ok")
        let done = expectation(description: "health")
        requester.execute(HealthRequest(responseQueue: queue)) { result in
            dispatchPrecondition(condition: .onQueue(queue))
            XCTAssertEqual(try? result.get(), "ok")
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
    }

    func testLoaderRequesterParsesWithTheRequestsParser() {
        let requester = LoaderRequester { request, completion in
            completion(Data("\(request.url?.lastPathComponent ?? "")".utf8), nil)
        }
        let done = expectation(description: "poster")
        requester.execute(posterRequest(name: "p.png", queue: .global())) { result in
            XCTAssertEqual((try? result.get()).map { String(decoding: $0, as: UTF8.self) }, "p.png")
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
    }

    func testURLSessionRequesterWithAStubProtocol() {
        StubURLProtocol.status = 200
        StubURLProtocol.body = Data(#"{"title":"A New Hope","episode_id":4}"#.utf8)
        let done = expectation(description: "film")
        StubURLProtocol.session().execute(filmRequest(id: 4)) { result in
            XCTAssertEqual(try? result.get(), Film(title: "A New Hope", episodeId: 4))
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
    }
}
