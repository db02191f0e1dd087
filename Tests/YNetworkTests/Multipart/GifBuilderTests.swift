import Foundation
import GentleNetworkingTesting
import Testing
import YNetwork

private struct GifUpload: MultipartRequest {
    let multipart: MultipartBuilder
    var path: PathRepresentable { "upload" }
    var responseType: ResponseContentType { .none }
}

/// A directory used as a flat bundle holding `name.gif`.
private func makeGifBundle(name: String, bytes: Data) throws -> (Bundle, URL) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ynetwork-gif-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try bytes.write(to: directory.appendingPathComponent("\(name).gif"))
    return (try #require(Bundle(path: directory.path)), directory)
}

@Suite("GifBuilder: a GIF from a bundle as a multipart body, without UIKit")
struct GifBuilderTests {
    @Test("Parts: the GIF as `file` (image/gif, the bundle's bytes) and the form fields; a missing GIF is nil data")
    func parts() throws {
        let gif = Data("GIF89a-fake".utf8)
        let (bundle, directory) = try makeGifBundle(name: "dance", bytes: gif)
        defer { try? FileManager.default.removeItem(at: directory) }
        let builder = GifBuilder(fileName: "dance", formFields: ["caption": "hi", "count": 2], bundle: bundle)

        #expect(builder.mimeType == "image/gif")
        #expect(builder.data == gif)
        #expect(Set(builder.parts.keys) == ["file", "caption", "count"])
        #expect(!builder.boundary.isEmpty)
        #expect(GifBuilder(fileName: "missing", formFields: [:], bundle: bundle).data == nil)
        #expect(GifBuilder(fileName: "a", formFields: [:], boundary: "b1").boundary == "b1")
    }

    @Test("On the wire the server parses the GIF part and the fields")
    func wire() async throws {
        let gif = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let (bundle, directory) = try makeGifBundle(name: "dance", bytes: gif)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .status(204) }
        let builder = GifBuilder(
            fileName: "dance", formFields: ["caption": "hi"], boundary: "gif-boundary", bundle: bundle)

        let _: EmptyNetworkResponse = try await makeManager(server: server).submit(GifUpload(multipart: builder))

        let received = try #require(server.requests(path: "/upload").first)
        #expect(received.header("Content-Type") == "multipart/form-data; boundary=gif-boundary")
        let parts = try #require(parseMultipart(received.body, boundary: "gif-boundary"))
        #expect(parts.map(\.name) == ["caption", "file"])
        #expect(parts.last?.fileName == "dance")
        #expect(parts.last?.headers["content-type"] == "image/gif")
        #expect(parts.last?.body == gif)
        #expect(parts.first?.body == Data("hi".utf8))
    }
}
