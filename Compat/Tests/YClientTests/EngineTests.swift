import Foundation
import XCTest
import YNetwork

#if COMPAT_SWIFT5
    @testable import YClient5
#else
    @testable import YClient
#endif

final class EngineTests: XCTestCase {
    override func tearDown() {
        URLProtocolStub.reset()
        super.tearDown()
    }

    func testRequestsGoThroughTheAppsEngine() async throws {
        URLProtocolStub.appendStub(withJSONObject: [["id": "7", "name": "Grace"]], statusCode: 200)
        let engine = RecordingEngine()
        let profiles: [Profile] = try await makeRecordingManager(engine).submit(GetProfilesRequest(page: 2))
        XCTAssertEqual(profiles, [Profile(id: "7", name: "Grace")])
        XCTAssertEqual(engine.requests.count, 1)
        XCTAssertEqual(engine.requests.first?.url?.host, "api.example.com")
    }

    func testTheEnginesOwnBackgroundTasksAreCancelable() throws {
        let engine = RecordingEngine()
        engine.configure(with: NetworkEngineConfiguration())
        let request = URLRequest(url: URL(string: "https://api.example.com/file")!)
        let task = try engine.submitBackgroundDownload(request)
        XCTAssertTrue(task is URLSessionDownloadTask)
        task.cancel()
    }
}
