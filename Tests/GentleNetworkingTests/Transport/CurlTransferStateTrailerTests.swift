import Foundation
import Testing

@testable import GentleNetworking

/// Regression tests for inputs the `curl-head` fuzz target found (Fuzz/Corpus/curl-head).
@Suite("CurlTransferState: trailers after the final head")
struct CurlTransferStateTrailerTests {
    private func feed(_ state: inout CurlTransferState, _ lines: [String]) -> CurlTransferState.Actions {
        var last = CurlTransferState.Actions()
        for line in lines {
            last = Array((line + "\r\n").utf8).withUnsafeBytes { state.headerLine($0) }
        }
        return last
    }

    private func makeState(maxHeaderCount: Int = 8) -> CurlTransferState {
        var state = CurlTransferState(
            sink: .memory, limits: .init(maxBodyBytes: 100, maxHeaderCount: maxHeaderCount, maxHeaderBytes: 2048),
            isHeadRequest: false, url: URL(string: "http://h/"))
        state.submitted()
        return state
    }

    @Test("Trailers are not merged into the head: a trailing Content-Length never joins Transfer-Encoding")
    func trailersAreNotMergedIntoTheHead() throws {
        // Given a chunked response (crash-trailer-merged-into-head) whose trailers carry a
        // Content-Length and another field
        var state = makeState()
        #expect(!feed(&state, ["HTTP/1.1 200 OK", "Transfer-Encoding: chunked", ""]).abort)
        #expect(state.bodyBytes(5).0 == .accept)
        #expect(!feed(&state, ["Content-Length: 5", "X-Trailer: t", ""]).abort)
        // When libcurl finishes
        let actions = state.finished(libcurlFailure: nil)
        // Then the caller gets the head as it was sent, without the trailer fields
        guard case .head(let head) = actions.resumeCaller else {
            Issue.record("expected the head, got \(String(describing: actions.resumeCaller))")
            return
        }
        #expect(head.statusCode == 200)
        #expect(head.headers.map(\.0) == ["Transfer-Encoding"])
    }

    @Test("Trailers still count toward the header-count limit")
    func trailersCountTowardTheLimit() {
        var state = makeState(maxHeaderCount: 2)
        #expect(!feed(&state, ["HTTP/1.1 200 OK", "Transfer-Encoding: chunked", ""]).abort)
        #expect(feed(&state, ["A: 1", "B: 2"]).abort)
        #expect(state.failure?.code == .responseTooLarge)
    }

    @Test("A trailer written as a status line does not replace the final head (nor does its Location)")
    func statusLineAfterFinalHeadIsATrailer() throws {
        // A proxy's CONNECT answer never reaches the state: CURLOPT_SUPPRESS_CONNECT_HEADERS.
        var state = makeState()
        #expect(!feed(&state, ["HTTP/1.1 200 OK", "Transfer-Encoding: chunked", ""]).abort)
        #expect(state.bodyBytes(5).0 == .accept)
        #expect(!feed(&state, ["HTTP/1.1 302 Found:", "Location: http://elsewhere/", ""]).abort)
        guard case .head(let head) = state.finished(libcurlFailure: nil).resumeCaller else {
            Issue.record("expected the head")
            return
        }
        #expect(head.statusCode == 200)
        #expect(head.headers.map(\.0) == ["Transfer-Encoding"])
    }

    @Test("A status line after a 1xx interim head starts the final head")
    func statusLineAfterInterimHead() throws {
        var state = makeState()
        #expect(!feed(&state, ["HTTP/1.1 100 Continue", "", "HTTP/1.1 201 Created", "X-A: b", ""]).abort)
        guard case .head(let head) = state.finished(libcurlFailure: nil).resumeCaller else {
            Issue.record("expected the head")
            return
        }
        #expect(head.statusCode == 201)
        #expect(head.headers.map(\.0) == ["X-A"])
    }

    @Test("A line of only spaces does not end the head: Transfer-Encoding after it still meets Content-Length")
    func whitespaceLineDoesNotEndTheHead() {
        var state = makeState()
        let actions = feed(&state, ["HTTP/1.1 200 OK", "Content-Length: 2", " ", "Transfer-Encoding: chunked", ""])
        #expect(actions.abort)
        #expect(state.failure?.code == .badResponse)
    }
}
