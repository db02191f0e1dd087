import Foundation
import XCTest
import YNetwork

#if COMPAT_SWIFT5
    @testable import YClient5
#else
    @testable import YClient
#endif

/// A response model that is a class with mutable state, so not `Sendable`: Y-Network's
/// `submit(_:completion:)` takes any `Decodable`.
final class Note: Decodable {
    var text: String
}

private struct ReportRequest: NetworkRequest {
    var path: PathRepresentable { return "/report.txt" }
}

/// Handlers written as Y-Network's tests write them: plain closures that record into the test's
/// local variables, in both language modes.
final class HandlerTests: XCTestCase {
    private let timeout: TimeInterval = 30

    override func tearDown() {
        URLProtocolStub.reset()
        super.tearDown()
    }

    func testCompletionHandlerRecordsIntoLocals() {
        URLProtocolStub.appendStub(withJSONObject: ["text": "hello"], statusCode: 200)
        let done = expectation(description: "completion")
        var received: Note?
        var calls = 0
        var onMain = false
        makeStubbedManager().submit(ReportRequest()) { (result: Result<Note, Error>) in
            calls += 1
            onMain = Thread.isMainThread
            received = try? result.get()
            done.fulfill()
        }
        wait(for: [done], timeout: timeout)
        XCTAssertEqual(calls, 1)
        XCTAssertTrue(onMain)
        XCTAssertEqual(received?.text, "hello")
    }

    func testDownloadProgressAndCompletionRecordIntoLocals() throws {
        let body = Data(repeating: 0x2A, count: 4096)
        URLProtocolStub.appendStub(withData: body, statusCode: 200, type: .download)
        let done = expectation(description: "download")
        var progressCount = 0
        var lastProgress: Percentage = -1
        var progressOnMain = true
        var contents: Data?
        let task = makeStubbedManager().submitBackgroundDownload(ReportRequest()) { percent in
            progressCount += 1
            lastProgress = percent
            progressOnMain = progressOnMain && Thread.isMainThread
        } completionHandler: { result in
            if case .success(let url) = result {
                contents = try? Data(contentsOf: url)
            }
            DispatchQueue.main.async {
                done.fulfill()
            }
        }
        XCTAssertNotNil(task)
        wait(for: [done], timeout: timeout)
        XCTAssertGreaterThan(progressCount, 0)
        XCTAssertEqual(lastProgress, 1)
        XCTAssertTrue(progressOnMain)
        XCTAssertEqual(contents, body)
    }

    func testUploadCompletionRecordsIntoLocals() {
        URLProtocolStub.appendStub(withData: Data("stored".utf8), statusCode: 201, type: .upload)
        let done = expectation(description: "upload")
        var response: String?
        var fractions: [Percentage] = []
        makeStubbedManager().submitBackgroundUpload(ReportRequest()) { fraction in
            fractions.append(fraction)
        } completionHandler: { data in
            response = String(decoding: data, as: UTF8.self)
            done.fulfill()
        }
        wait(for: [done], timeout: timeout)
        XCTAssertEqual(response, "stored")
        XCTAssertEqual(fractions.last, 1)
    }
}
