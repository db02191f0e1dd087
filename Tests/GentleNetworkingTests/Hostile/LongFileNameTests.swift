import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A file name may be up to 255 bytes (`NAME_MAX`). Files the library writes for a caller go
/// through a temporary name beside the target; that name must fit too, or a valid destination
/// fails with `ENAMETOOLONG` (a 250-byte name failed every download and HAR write).
@Suite("A destination whose name is near NAME_MAX is written like any other")
struct LongFileNameTests {
    /// A 250-byte name, 2-byte characters included, so byte counting (not character counting)
    /// decides.
    static let longName = String(repeating: "é", count: 60) + String(repeating: "n", count: 126) + ".bin"

    @Test("The name is valid on this file system: a plain write to it succeeds")
    func nameIsValid() throws {
        #expect(Self.longName.utf8.count == 250)
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("x".utf8).write(to: directory.appendingPathComponent(Self.longName))
    }

    #if canImport(CCurl)
        @Test("CurlTransport.download writes a file with a 250-byte name and leaves nothing else")
        func curlDownload() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let payload = Data(repeating: 0x5A, count: 70_000)
            server.route("GET", "/file") { _ in LoopbackResponse(status: 200, headers: [], body: payload) }
            let directory = makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let destination = directory.appendingPathComponent(Self.longName)
            let response = try await CurlTransport().download(
                for: URLRequest(url: server.url("/file")), to: destination)
            #expect(response.statusCode == 200)
            #expect(try Data(contentsOf: destination) == payload)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [Self.longName])
            #expect(server.requests(path: "/file").count == 1)
        }
    #endif

    @Test("A download through memory (decorated stacks, Y-Network engines) writes a 250-byte name")
    func downloadThroughMemory() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/file") { _ in LoopbackResponse.text("through memory") }
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent(Self.longName)
        let transport = URLSessionTransport(session: makeIsolatedSession())
        let response = try await transport.downloadThroughMemory(
            for: URLRequest(url: server.url("/file")), to: destination, progress: nil)
        #expect(response.statusCode == 200)
        #expect(try String(contentsOf: destination, encoding: .utf8) == "through memory")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [Self.longName])
    }

    @Test("HARRecorder.write(to:) writes a 250-byte name; a name of 255 bytes too")
    func harFile() throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let har = HARRecorder(creatorName: "LongFileNameTests")
        for name in [Self.longName, String(repeating: "h", count: 250) + ".json"] {
            let url = directory.appendingPathComponent(name)
            try har.write(to: url)
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
            #expect(json?["log"] != nil)
        }
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
                == [Self.longName, String(repeating: "h", count: 250) + ".json"])
    }

    @Test("Temporary names stay within 255 bytes and beside the target")
    func temporaryPaths() {
        for length in [1, 200, 233, 240, 255] {
            let path = "/some/dir/" + String(repeating: "a", count: length)
            let temporary = AtomicFile.temporaryPath(for: path)
            #expect(temporary.hasPrefix("/some/dir/"))
            let name = temporary.split(separator: "/").last.map(String.init) ?? ""
            #expect(name.utf8.count <= 255, "\(length): \(name.utf8.count) bytes")
        }
        #expect(AtomicFile.temporaryPath(for: "/d/credentials.json").hasPrefix("/d/credentials.json.tmp-"))
        #expect(AtomicFile.temporaryPath(for: "relative").hasPrefix("relative.tmp-"))
        #expect(AtomicFile.temporaryPath(for: String(repeating: "r", count: 250)).hasPrefix(".gentle-partial.tmp-"))
    }
}
