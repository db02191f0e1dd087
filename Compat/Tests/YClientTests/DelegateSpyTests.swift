import Foundation
import XCTest
import YNetwork

#if COMPAT_SWIFT5
    @testable import YClient5
#else
    @testable import YClient
#endif

/// A spy as Y-Network's download tests write one: it overrides the manager's session delegate
/// callbacks and calls `super`. (Swift 6 mode warns until a subclass restates the inherited
/// `@unchecked Sendable`; it is restated here, in both modes.)
private final class DownloadSpy: NetworkManager, @unchecked Sendable {
    private(set) var totalBytesWritten: Int64?
    private(set) var didFinishDownloadingTo: URL?
    private(set) var receivedError: Error?
    private(set) var completions = 0

    override func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didFinishDownloadingTo location: URL
    ) {
        super.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
        didFinishDownloadingTo = location
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        super.urlSession(session, task: task, didCompleteWithError: error)
        receivedError = error
        completions += 1
    }

    override func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        super.urlSession(
            session,
            downloadTask: downloadTask,
            didWriteData: bytesWritten,
            totalBytesWritten: totalBytesWritten,
            totalBytesExpectedToWrite: totalBytesExpectedToWrite
        )
        self.totalBytesWritten = totalBytesWritten
    }
}

final class DelegateSpyTests: XCTestCase {
    func testOverriddenCallbacksRunThroughTheProtocolAndTheBaseClass() throws {
        let spy = DownloadSpy()
        let delegate: URLSessionDownloadDelegate = spy
        let manager: NetworkManager = spy
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = try XCTUnwrap(URL(string: "https://api.example.com/file"))
        let task = session.downloadTask(with: url)
        let location = URL(fileURLWithPath: "/tmp/download")

        delegate.urlSession(session, downloadTask: task, didFinishDownloadingTo: location)
        manager.urlSession(
            session, downloadTask: task, didWriteData: 10, totalBytesWritten: 30, totalBytesExpectedToWrite: 40)
        manager.urlSession(session, task: task, didCompleteWithError: URLError(.cancelled))

        XCTAssertEqual(spy.didFinishDownloadingTo, location)
        XCTAssertEqual(spy.totalBytesWritten, 30)
        XCTAssertEqual((spy.receivedError as? URLError)?.code, .cancelled)
        XCTAssertEqual(spy.completions, 1)
    }
}
