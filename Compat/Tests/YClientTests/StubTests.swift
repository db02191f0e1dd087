import Foundation
import XCTest
import YNetwork

#if COMPAT_SWIFT5
    @testable import YClient5
#else
    @testable import YClient
#endif

final class StubTests: XCTestCase {
    override func tearDown() {
        URLProtocolStub.reset()
        super.tearDown()
    }

    func testSubmitDecodesAStubbedJSONObject() async throws {
        URLProtocolStub.appendStub(withJSONObject: [["id": "1", "name": "Ada"]], statusCode: 200)
        let manager = makeStubbedManager()
        let profiles: [Profile] = try await manager.submit(GetProfilesRequest(page: 1))
        XCTAssertEqual(profiles, [Profile(id: "1", name: "Ada")])
        XCTAssertEqual(manager.lastStatusCode, 200)
    }

    func testA401IsUnauthenticated() async {
        URLProtocolStub.appendStub(withData: Data(), statusCode: 401)
        do {
            let _: [Profile] = try await makeStubbedManager().submit(GetProfilesRequest(page: 1))
            XCTFail("expected unauthenticated")
        } catch {
            XCTAssertEqual(error as? NetworkError, .unauthenticated)
        }
    }

    func testStubbedFailure() async {
        URLProtocolStub.appendStub(.failure(URLError(.notConnectedToInternet)), type: .data)
        do {
            let _: [Profile] = try await makeStubbedManager().submit(GetProfilesRequest(page: 1))
            XCTFail("expected a failure")
        } catch {
            XCTAssertEqual(ProfileService.message(for: error), "offline")
        }
    }

    func testStubHelpers() {
        XCTAssertNotNil(URLProtocolStub.makeData(withJSONObject: ["a": 1]))
        XCTAssertEqual(URLProtocolStub.makeHTTPURLResponse(statusCode: 204)?.statusCode, 204)
    }

    func testBuilderSubclassAndParameters() throws {
        struct Flags: NetworkRequest {
            var path: PathRepresentable { return "/x" }
            var queryParameters: ParametersBuilder? { return ["on": true, "off": false] }
        }
        let configuration = NetworkManagerConfiguration(basePath: "https://h.example")
        let url = try FlagKeepingURLBuilder().url(for: Flags(), configuration: configuration)
        XCTAssertEqual(url.query, "off=false&on")
        XCTAssertEqual(PagingParameters(page: 3).parameters["page"] as? Int, 3)
    }
}
