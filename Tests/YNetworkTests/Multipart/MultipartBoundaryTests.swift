import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import YNetwork

private struct Upload: MultipartRequest {
    var path: PathRepresentable { "upload" }
    let multipart: MultipartBuilder
}

/// The idiomatic conformance: `multipart` computed, with the builder's default (random) boundary,
/// so every read of it is a new builder with a new boundary.
private struct ComputedUpload: MultipartRequest {
    let file: URL?
    var path: PathRepresentable { "upload" }
    var multipart: MultipartBuilder {
        var parts: [String: MultipartElement] = ["note": .formField(value: "hi")]
        if let file {
            parts["doc"] = .file(info: MultipartFileInfo(fileName: "big.bin", fileURL: file, mimeType: "x/y"))
        }
        return MultipartForm(parts: parts)
    }
}

/// A part whose bytes hold `--` and the boundary would end early when the server parses the body,
/// and what follows would be read as parts of its own. With a fixed boundary (common in apps and
/// in tests), text a user typed could add a `role=admin` part. Such a body is refused.
@Suite("Multipart: a part holding its boundary is refused, never sent as extra parts", .serialized)
struct MultipartBoundaryTests {
    private static let hostile = "hi\r\n--fixed\r\nContent-Disposition: form-data; name=\"role\"\r\n\r\nadmin"

    @Test("In memory: a field or a file's bytes holding the delimiter throw boundaryInContent, naming the part")
    func inMemory() {
        let field = MultipartForm(parts: ["bio": .formField(value: Self.hostile)], boundary: "fixed")
        #expect(throws: MultipartError.boundaryInContent(part: "bio")) { try field.body(encoder: nil) }
        let file = MultipartForm(
            parts: [
                "a": .formField(value: "fine"),
                "doc": .file(
                    info: MultipartFileInfo(fileName: "d.txt", data: Data(Self.hostile.utf8), mimeType: "text/plain")),
            ],
            boundary: "fixed")
        #expect(throws: MultipartError.boundaryInContent(part: "doc")) { try file.body(encoder: nil) }
    }

    @Test(
        "A boundary RFC 2046 does not allow is invalidBoundary, in memory, by size and streamed",
        arguments: [
            "b; charset=utf-8", "My\"Boundary", "", String(repeating: "b", count: 71), "ends ", "tab\there", "é",
        ])
    func invalidBoundary(boundary: String) throws {
        let hostile = "\r\n--b\r\nContent-Disposition: form-data; name=\"role\"\r\n\r\nadmin"
        let form = MultipartForm(parts: ["bio": .formField(value: hostile)], boundary: boundary)
        #expect(throws: MultipartError.invalidBoundary(boundary)) { try form.body(encoder: nil) }
        #expect(throws: MultipartError.invalidBoundary(boundary)) { try form.contentLength() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("yn-boundary-\(UUID())")
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: MultipartError.invalidBoundary(boundary)) { try form.writeBody(to: file) }
    }

    @Test("Every RFC 2046 boundary character is accepted, up to 70 of them")
    func validBoundaries() throws {
        for boundary in ["'()+_,-./:=?", "a b", String(repeating: "Z9", count: 35), "x"] {
            let form = MultipartForm(parts: ["f": .formField(value: "v")], boundary: boundary)
            let body = try form.body(encoder: nil)
            #expect(body.count == Int(try form.contentLength()))
        }
    }

    @Test("A boundary that is not an HTTP token is quoted in Content-Type, so servers read all of it")
    func boundaryQuoted() {
        #expect(RequestContentType.multipart(boundary: "a b").value == #"multipart/form-data; boundary="a b""#)
        #expect(RequestContentType.multipart(boundary: "x(y)=z?").value == #"multipart/form-data; boundary="x(y)=z?""#)
        #expect(
            RequestContentType.multipart(boundary: "plain-Token_1.2'+").value
                == "multipart/form-data; boundary=plain-Token_1.2'+")
    }

    @Test("NUL in a part's name, file name or type is escaped or removed, as CR and LF are")
    func nulInPartHeaders() throws {
        let form = MultipartForm(
            parts: [
                "na\0me": .file(
                    info: MultipartFileInfo(fileName: "a\0.txt", data: Data("x".utf8), mimeType: "text/pl\0ain"))
            ],
            boundary: "nul-boundary")
        let body = try form.body(encoder: nil)
        #expect(!body.contains(0), "no NUL byte in the body")
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("name=\"na%00me\"; filename=\"a%00.txt\""), "\(text)")
        #expect(text.contains("Content-Type: text/plain\r\n"), "\(text)")
    }

    @Test("Near misses are sent as they are", arguments: ["-fixed", "--fixe", "- -fixed", "--FIXED", "fixed--", "--"])
    func nearMisses(text: String) throws {
        let form = MultipartForm(parts: ["bio": .formField(value: text)], boundary: "fixed")
        let body = try form.body(encoder: nil)
        let parts = try #require(parseMultipart(body, boundary: "fixed"))
        #expect(parts.map(\.body) == [Data(text.utf8)])
    }

    @Test("Streamed from a file: the delimiter is found wherever it falls, across the 256 KiB reads too")
    func streamedFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("boundary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("part.bin")
        let output = directory.appendingPathComponent("body.bin")
        let delimiter = Array("--fixed".utf8)
        let edge = 256 * 1024
        for start in [0, edge - 7, edge - 4, edge - 1, edge, 2 * edge + 100] {
            var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 3 * edge)
            bytes.replaceSubrange(start..<start + delimiter.count, with: delimiter)
            try Data(bytes).write(to: source)
            let form = MultipartForm(
                parts: ["f": .file(info: MultipartFileInfo(fileName: "f.bin", fileURL: source, mimeType: "x/y"))],
                boundary: "fixed")
            #expect(throws: MultipartError.boundaryInContent(part: "f"), "delimiter at \(start)") {
                try form.writeBody(to: output)
            }
        }
        // All but the last byte of the delimiter, on the edge: not a delimiter, sent whole.
        var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 2 * edge)
        bytes.replaceSubrange(edge - 3..<edge + 3, with: delimiter.dropLast())
        try Data(bytes).write(to: source)
        let form = MultipartForm(
            parts: ["f": .file(info: MultipartFileInfo(fileName: "f.bin", fileURL: source, mimeType: "x/y"))],
            boundary: "fixed")
        try form.writeBody(to: output)
        let parts = try #require(parseMultipart(try Data(contentsOf: output), boundary: "fixed"))
        #expect(parts.map(\.body) == [Data(bytes)])
    }

    @Test("The scanner finds the delimiter split at every point between two pieces, and nothing else")
    func scannerSplits() {
        let text = Array("ab--bnd-cd".utf8)
        for cut in 0...text.count {
            var scanner = BoundaryScanner(boundary: "bnd")
            let first = scanner.isFound(in: Data(text[..<cut]))
            let second = scanner.isFound(in: Data(text[cut...]))
            #expect(first || second, "cut at \(cut)")
        }
        for pieces in [["--b", "n", "x"], ["-", "-", "b", "n"], ["--bn", "D"], ["", "--", "bn", ""]] {
            var scanner = BoundaryScanner(boundary: "bnd")
            #expect(!pieces.contains { scanner.isFound(in: Data($0.utf8)) }, "\(pieces)")
        }
        var scanner = BoundaryScanner(boundary: "bnd")
        #expect(["-", "-", "b", "n", "d"].contains { scanner.isFound(in: Data($0.utf8)) })
    }

    @Test("Through the manager: the submit fails and nothing reaches the server")
    func onTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .json("{}") }
        let form = MultipartForm(parts: ["bio": .formField(value: Self.hostile)], boundary: "fixed")
        await #expect {
            let _: EmptyNetworkResponse = try await makeManager(server: server).submit(Upload(multipart: form))
        } throws: { error in
            // A body that cannot be built is a serialization error, as an unreadable file part is.
            guard case YNetwork.NetworkError.serialization(let cause) = error else { return false }
            return cause as? MultipartError == .boundaryInContent(part: "bio")
        }
        #expect(server.receivedRequests.isEmpty)
    }

    @Test(
        "A computed multipart (a new random boundary per read): the Content-Type names the body's boundary, in memory and streamed",
        arguments: [false, true])
    func computedBuilder(streamed: Bool) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .json("{}") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("yn-computed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var file: URL?
        if streamed {
            // Past the 10 MiB threshold: the body goes out from a file.
            try Data(repeating: UInt8(ascii: "x"), count: 11 << 20).write(to: scratch)
            file = scratch
        }
        let _: EmptyNetworkResponse = try await makeManager(server: server).submit(ComputedUpload(file: file))
        let received = try #require(server.receivedRequests.first)
        let contentType = try #require(received.header("Content-Type"))
        let boundary = try #require(contentType.components(separatedBy: "boundary=").last)
        // Before: the header named one boundary and the body used another; no part was found.
        let parts = try #require(parseMultipart(received.body, boundary: boundary), "\(contentType)")
        #expect(received.header("Boundary") == boundary, "Y-Network's extra field names the body's boundary")
        #expect(parts.map(\.name) == (streamed ? ["doc", "note"] : ["note"]))
        #expect(parts.last?.body == Data("hi".utf8))
        if streamed { #expect(parts.first?.body.count == 11 << 20) }
    }
}
