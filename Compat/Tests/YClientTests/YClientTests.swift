import Foundation
import XCTest
import YNetwork

#if COMPAT_SWIFT5
    @testable import YClient5
#else
    @testable import YClient
#endif

final class YClientTests: XCTestCase {
    let configuration = makeConfiguration(basePath: "https://api.example.com/v1/")

    func testRelativePathJoinsTheBasePathWithOneSlash() throws {
        let url = try URLBuilder().url(for: GetProfilesRequest(page: 2), configuration: configuration)
        XCTAssertEqual(url.absoluteString, "https://api.example.com/v1/profiles?page=2&q=a%20b&verbose")
    }

    func testRequestBasePathWins() throws {
        let path = try URLBuilder().path(
            for: UpdateProfileRequest(profile: Profile(id: "7", name: "n")), configuration: configuration)
        XCTAssertEqual(path, "https://edit.example.com/api/profiles/7")
    }

    func testNoBasePathThrows() async {
        let manager = NetworkManager()
        manager.configure(with: NetworkManagerConfiguration())
        do {
            let _: [Profile] = try await manager.submit(GetProfilesRequest(page: 1))
            XCTFail("expected noBasePath")
        } catch {
            XCTAssertEqual(error as? NetworkError, .noBasePath)
            XCTAssertEqual(ProfileService.message(for: error), "bad setup")
        }
    }

    func testRequestDefaults() {
        let request = GetProfilesRequest(page: 1)
        XCTAssertNil(request.basePath)
        XCTAssertEqual(request.method, .GET)
        XCTAssertNil(request.headers)
        XCTAssertEqual(request.requestType, .JSON)
        XCTAssertEqual(request.responseType, .JSON)
        XCTAssertNil(request.body)
        XCTAssertEqual(request.timeoutInterval, 0)
        XCTAssertNil(request.cachePolicy)
        XCTAssertNil(request.parserFactory)
        XCTAssertTrue(request.usesSession)
        XCTAssertFalse(LoginRequest(user: "u").usesSession)
        XCTAssertEqual(ProfilePath.avatar.pathValue, "/profiles/avatar")
    }

    func testJSONBodyEncodes() throws {
        let body = try XCTUnwrap(UpdateProfileRequest(profile: Profile(id: "7", name: "Zoë")).body)
        let data = try body.body(encoder: JSONEncoder())
        XCTAssertEqual(try JSONDecoder().decode(Profile.self, from: data), Profile(id: "7", name: "Zoë"))
    }

    func testMultipartBody() throws {
        let request = AvatarUploadRequest(image: Data([1, 2, 3]))
        XCTAssertEqual(request.method, .POST)
        XCTAssertEqual(request.requestType, .multipart(boundary: "compat-boundary"))
        let data = try request.multipart.body(encoder: nil)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.contains("--compat-boundary"))
        XCTAssertTrue(text.contains(#"name="caption""#))
        XCTAssertTrue(text.contains(#"filename="a.png""#))
    }

    func testSessionManagerAppliesItsToken() async {
        let session = TokenSessionManager(token: "abc")
        var request = URLRequest(url: URL(string: "https://api.example.com")!)
        session.apply(&request)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Authorization"), "Bearer abc")
        let refreshed = await session.refresh(networkManager: NetworkManager())
        XCTAssertTrue(refreshed)
        XCTAssertEqual(session.current, "refreshed")
    }

    func testHttpErrorAndMessages() {
        let error = HttpError(statusCode: 418, headers: ["X-A": "1"], data: Data(#"{"e":1}"#.utf8))
        XCTAssertEqual(error.statusCode, 418)
        XCTAssertEqual(ProfileService.message(for: error), "HTTP 418")
        XCTAssertEqual(ProfileService.message(for: NetworkError.unauthenticated), "log in")
    }

    func testJWTToken() throws {
        // {"alg":"none"} . {"sub":"u1","exp":4102444800}
        let token = try JWTToken(jwtString: "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MSIsImV4cCI6NDEwMjQ0NDgwMH0.")
        XCTAssertEqual(token.subject, "u1")
        XCTAssertFalse(token.isExpired)
    }
}
