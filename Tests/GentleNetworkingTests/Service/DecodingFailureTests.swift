import Foundation
import Testing

@testable import GentleNetworking

/// The text of a decoding failure: bounded, and scrubbed of the request's secrets before it is cut.
@Suite("DecodingFailure: bounded, scrubbed text")
struct DecodingFailureTests {
    @Test("A secret across the 512-byte cut leaves no prefix of itself")
    // "data corrupted: " (16 bytes) + 488 bytes: the secret spans bytes 504-527.
    func secretAcrossTheCut() {
        let secret = "sk-live-0123456789abcdef"
        let text = String(repeating: "a", count: 488) + secret + String(repeating: "b", count: 100)
        let error = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: text))
        let failure = DecodingFailure.from(
            error, modelType: "M", statusCode: 200, body: Data(), secrets: [secret])
        #expect(!failure.reason.contains("sk-live"), "\(failure.reason.suffix(40))")
        #expect(failure.reason.utf8.count <= DecodingFailure.maxTextBytes + 3)
    }
}
