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

    @Test(
        "Form fields typed as Y-Network's ([String: CustomStringConvertible], not Sendable) compile and send the same text"
    )
    func nonSendableFieldValues() throws {
        // Values typed as the original's existential: neither the builder nor the case took them.
        let fields: [String: CustomStringConvertible] = ["caption": "hi", "count": 2, "ratio": 0.5]
        let builder = GifBuilder(fileName: "a", formFields: fields, boundary: "b-1")
        let sendable = GifBuilder(
            fileName: "a", formFields: ["caption": "hi", "count": 2, "ratio": 0.5], boundary: "b-1")
        #expect(Set(builder.parts.keys) == ["file", "caption", "count", "ratio"])
        for name in ["caption", "count", "ratio"] {
            var viaExistential = Data()
            var viaSendable = Data()
            try #require(builder.parts[name]).encode(data: &viaExistential, name: name)
            try #require(sendable.parts[name]).encode(data: &viaSendable, name: name)
            #expect(viaExistential == viaSendable, "\(name)")
        }
        let value: CustomStringConvertible = 42
        var body = Data()
        MultipartElement.formField(value: value).encode(data: &body, name: "answer")
        #expect(String(decoding: body, as: UTF8.self).hasSuffix("\r\n\r\n42\r\n"))
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
