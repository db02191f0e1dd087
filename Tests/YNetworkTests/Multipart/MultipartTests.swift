import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Synchronization
import Testing

@testable import YNetwork

private struct Upload: MultipartRequest {
    var path: PathRepresentable { "upload" }
    let multipart: MultipartBuilder
}

@Suite("Multipart bodies: as a server parses them, in memory or streamed from a file", .serialized)
struct MultipartTests {
    @Test("Fields and files arrive as separate parts, in name order, with names, file names and types")
    func partsOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .json(#"{"id":1,"name":"ok"}"#) }
        let fileBytes = Data((0..<3000).map { UInt8($0 % 251) })
        let form = MultipartForm(
            parts: [
                "title": .formField(value: "Holiday \"2024\""),
                "count": .formField(value: 3),
                "photo": .file(info: MultipartFileInfo(fileName: "a\r\nb.png", data: fileBytes, mimeType: "image/png")),
            ],
            boundary: "test-boundary-123")
        let _: User = try await makeManager(server: server).submit(Upload(multipart: form))

        let received = try #require(server.requests(path: "/upload").first)
        #expect(received.method == "POST")
        #expect(received.header("Content-Type") == "multipart/form-data; boundary=test-boundary-123")
        #expect(received.header("Boundary") == "test-boundary-123", "as Y-Network adds it")
        let parts = try #require(parseMultipart(received.body, boundary: "test-boundary-123"))
        #expect(parts.map(\.name) == ["count", "photo", "title"])
        #expect(parts[0].body == Data("3".utf8))
        #expect(parts[1].fileName == "a%0D%0Ab.png")
        #expect(parts[1].headers["content-type"] == "image/png")
        #expect(parts[1].body == fileBytes)
        #expect(parts[2].body == Data("Holiday \"2024\"".utf8))
        #expect(received.body.count == Int(try form.contentLength()))
    }

    @Test("A backslash in a part's name or file name cannot end its quotes for a parser that reads quoted pairs")
    func backslashInNames() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .json(#"{"id":1,"name":"ok"}"#) }
        let form = MultipartForm(
            parts: [
                "field\\": .file(
                    info: MultipartFileInfo(
                        fileName: "; name=admin; x=.txt", data: Data("x".utf8), mimeType: "text/plain"))
            ],
            boundary: "test-boundary-456")
        let _: User = try await makeManager(server: server).submit(Upload(multipart: form))
        let received = try #require(server.requests(path: "/upload").first)
        let parts = try #require(parseMultipart(received.body, boundary: "test-boundary-456"))
        // Read with RFC 9110's quoted pairs, `name="field\"` ran on into the file name.
        #expect(
            parts.first?.headers["content-disposition"]
                == #"form-data; name="field%5C"; filename="; name=admin; x=.txt""#)
    }

    @Test("A quote, CR or LF followed by a combining mark is escaped too: on the wire the part has its one header")
    func combiningMarkAfterDelimiter() async throws {
        // Foundation's default search reads `"` + U+0301 (or CR + U+0301) as one character and
        // replaced none of them: the file name ended its quotes, or its header line.
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .json(#"{"id":1,"name":"ok"}"#) }
        let fileName = "a\"\u{301}; name=\"admin\u{301}\r\u{301}\nX-Injected: 1.txt"
        let form = MultipartForm(
            parts: [
                "doc\"\u{301}": .file(
                    info: MultipartFileInfo(
                        fileName: fileName, data: Data("x".utf8), mimeType: "text/plain\r\u{301}\nX: 2"))
            ],
            boundary: "test-boundary-789")
        let _: User = try await makeManager(server: server).submit(Upload(multipart: form))
        let received = try #require(server.requests(path: "/upload").first)
        let parts = try #require(parseMultipart(received.body, boundary: "test-boundary-789"))
        #expect(parts.count == 1)
        #expect(parts.first?.headers["x-injected"] == nil && parts.first?.headers["x"] == nil)
        let disposition = try #require(parts.first?.headers["content-disposition"])
        // Two quoted values, each with its quotes only: four `"` bytes in all.
        #expect(disposition.utf8.filter { $0 == UInt8(ascii: "\"") }.count == 4, "\(disposition)")
        #expect(MultipartElement.headerSafe("a\r\u{301}\n\u{301}b").utf8.allSatisfy { $0 != 0x0D && $0 != 0x0A })
    }

    @Test("Up to 10 MiB the body is built in memory; above, it is written to a temporary file, removed after")
    func streamingThreshold() throws {
        let small = try makePatternFile(size: 1 << 20)
        let large = try makePatternFile(size: 11 << 20)
        defer {
            try? FileManager.default.removeItem(at: small)
            try? FileManager.default.removeItem(at: large)
        }
        let assembler = RequestAssembler(configuration: NetworkManagerConfiguration(basePath: "https://h.example"))
        func part(_ url: URL) -> MultipartForm {
            MultipartForm(parts: [
                "file": .file(info: MultipartFileInfo(fileName: "f.bin", fileURL: url, mimeType: "x/y"))
            ])
        }
        let inMemory = try assembler.build(Upload(multipart: part(small)))
        #expect(inMemory.bodyFile == nil)
        #expect(inMemory.request.httpBody?.count == Int(try part(small).contentLength()))

        let streamed = try assembler.build(Upload(multipart: part(large)))
        let file = try #require(streamed.bodyFile)
        #expect(streamed.request.httpBody == nil)
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
        #expect(size?.int64Value == (try part(large).contentLength()))
        streamed.removeTemporaryFile()
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("An 11 MiB file part is streamed from disk and arrives byte for byte; the temporary file is gone after")
    func largeBodyOnTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .json(#"{"id":2,"name":"big"}"#) }
        let source = try makePatternFile(size: 11 << 20)
        defer { try? FileManager.default.removeItem(at: source) }
        let before = temporaryMultipartFiles()
        let form = MultipartForm(
            parts: [
                "note": .formField(value: "large"),
                "file": .file(
                    info: MultipartFileInfo(fileName: "big.bin", fileURL: source, mimeType: "application/octet-stream")),
            ],
            boundary: "big-boundary")
        let _: User = try await makeManager(server: server).submit(Upload(multipart: form))

        let received = try #require(server.requests(path: "/upload").first)
        let parts = try #require(parseMultipart(received.body, boundary: "big-boundary"))
        #expect(parts.map(\.name) == ["file", "note"])
        #expect(parts[0].body == (try Data(contentsOf: source)))
        #expect(parts[1].body == Data("large".utf8))
        // Other tests running in parallel make (and remove) such files too: wait until no file
        // made since `before` is left; a file this request leaked would never go.
        var left = temporaryMultipartFiles().subtracting(before)
        for _ in 0..<2_000 where !left.isEmpty {  // up to 200 s: a starved test may hold its file
            try await Task.sleep(nanoseconds: 100_000_000)
            left.formIntersection(temporaryMultipartFiles())  // files made since do not count
        }
        #expect(left.isEmpty)
    }

    @Test("A missing file part is a serialization error, before anything is sent")
    func missingFile() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
        let form = MultipartForm(parts: [
            "f": .file(info: MultipartFileInfo(fileName: "x", fileURL: missing, mimeType: "x/y"))
        ])
        do {
            let _: User = try await makeManager(server: server).submit(Upload(multipart: form))
            Issue.record("A missing file must fail")
        } catch YNetwork.NetworkError.serialization(let underlying) {
            #expect(underlying as? MultipartError == .unreadableFile(missing))
        }
        #expect(server.receivedRequests.isEmpty)
    }

    /// Runs `body` on a thread of its own and waits at most `seconds`: a read of `/dev/zero` or
    /// an open of a FIFO does not return, so it must not hold the test.
    private func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done.wait(timeout: .now() + seconds) == .success
    }

    @Test(
        "A file part that is /dev/zero or a FIFO is unreadableFile at once, in memory and streamed; nothing is sent",
        arguments: ["/dev/zero", "fifo"])
    func notARegularFile(kind: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yn-special-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = kind == "fifo" ? directory.appendingPathComponent("pipe").path : kind
        if kind == "fifo" { #expect(mkfifo(path, 0o600) == 0) }
        let special = URL(fileURLWithPath: path)
        let big = Data(repeating: 0x41, count: 11 << 20)
        let forms = [
            "in memory": MultipartForm(parts: [
                "f": .file(info: MultipartFileInfo(fileName: "z", fileURL: special, mimeType: "x/y"))
            ]),
            "streamed": MultipartForm(parts: [
                "a": .file(info: MultipartFileInfo(fileName: "big", data: big, mimeType: "x/y")),
                "f": .file(info: MultipartFileInfo(fileName: "z", fileURL: special, mimeType: "x/y")),
            ]),
        ]
        let assembler = RequestAssembler(configuration: NetworkManagerConfiguration(basePath: "https://h.example"))
        for (name, form) in forms {
            let outcome = Mutex<(any Error)?>(nil)
            let finished = finishes(within: 120) {
                do {
                    let built = try assembler.build(Upload(multipart: form))
                    built.removeTemporaryFile()
                } catch {
                    outcome.withLock { $0 = error }
                }
            }
            #expect(finished, "\(name): still reading \(path) after 120 s")
            guard finished else { continue }
            let error = outcome.withLock { $0 }
            guard case .serialization(let underlying)? = error as? YNetwork.NetworkError else {
                Issue.record("\(name): \(String(describing: error))")
                continue
            }
            #expect(underlying as? MultipartError == .unreadableFile(special), "\(name): \(underlying)")
        }
    }

    @Test("writeBody(to:) itself refuses /dev/zero and a FIFO at once (contentLength is not asked first)")
    func writeBodyRefusesSpecialFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yn-write-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in ["/dev/zero", fifo] {
            let special = URL(fileURLWithPath: path)
            let form = MultipartForm(parts: [
                "f": .file(info: MultipartFileInfo(fileName: "z", fileURL: special, mimeType: "x/y"))
            ])
            let output = directory.appendingPathComponent("body-\(UUID())")
            let outcome = Mutex<(any Error)?>(nil)
            let finished = finishes(within: 120) {
                do { try form.writeBody(to: output) } catch { outcome.withLock { $0 = error } }
            }
            #expect(finished, "\(path): still reading after 120 s")
            guard finished else { continue }
            #expect(outcome.withLock { $0 } as? MultipartError == .unreadableFile(special), "\(path)")
        }
    }

    @Test(
        "writeBody(to:) a FIFO with no reader, or a directory: cannotWrite at once; an existing file of ours is replaced"
    )
    func writeBodyRefusesSpecialDestinations() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yn-dest-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let form = MultipartForm(parts: ["a": .formField(value: "1")], boundary: "dest-boundary")
        for destination in [fifo, directory] {
            let outcome = Mutex<(any Error)?>(nil)
            // Before: open(2) of a FIFO without a reader never returned.
            let finished = finishes(within: 120) {
                do { try form.writeBody(to: destination) } catch { outcome.withLock { $0 = error } }
            }
            #expect(finished, "\(destination.lastPathComponent): still opening after 120 s")
            guard finished else { continue }
            #expect(outcome.withLock { $0 } as? MultipartError == .cannotWrite(destination))
        }
        let existing = directory.appendingPathComponent("body")
        try Data(repeating: 0x41, count: 10_000).write(to: existing)
        try form.writeBody(to: existing)
        let written = try Data(contentsOf: existing)
        #expect(written.count < 200 && String(decoding: written, as: UTF8.self).hasSuffix("--dest-boundary--\r\n"))
    }

    @Test(
        "writeBody(to:) that fails part-way (a later part holds the boundary, a file part is not a regular file) leaves the existing file as it was, and no partial body beside it"
    )
    func failedWriteBodyKeepsTheDestination() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yn-keep-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let destination = directory.appendingPathComponent("body")
        let original = Data("the caller's file, kept whole".utf8)
        let boundary = "keep-boundary"
        // Parts go out in name order: "a" is written before "z" fails.
        let forms: [(MultipartForm, MultipartError)] = [
            (
                MultipartForm(
                    parts: ["a": .formField(value: "first"), "z": .formField(value: "x\r\n--\(boundary)\r\ny")],
                    boundary: boundary),
                .boundaryInContent(part: "z")
            ),
            (
                MultipartForm(
                    parts: [
                        "a": .formField(value: "first"),
                        "z": .file(info: MultipartFileInfo(fileName: "pipe", fileURL: fifo, mimeType: "text/plain")),
                    ],
                    boundary: boundary),
                .unreadableFile(fifo)
            ),
        ]
        for (form, expected) in forms {
            try original.write(to: destination)
            #expect(throws: expected) { try form.writeBody(to: destination) }
            #expect(try Data(contentsOf: destination) == original)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["body", "pipe"], "left beside the destination: \(names)")
        }
    }

    @Test(
        "A cancelled task stops writing a large multipart body: CancellationError (not a serialization error), no file left"
    )
    func cancelledSpool() async throws {
        let source = try makePatternFile(size: 12 << 20)
        defer { try? FileManager.default.removeItem(at: source) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("yn-cancel-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let form = MultipartForm(
            parts: ["file": .file(info: MultipartFileInfo(fileName: "f", fileURL: source, mimeType: "x/y"))],
            boundary: "cancel-boundary")
        let destination = directory.appendingPathComponent("body")
        let written = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try form.writeBody(to: destination)
        }
        await #expect(throws: CancellationError.self) { try await written.value }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

        // Through Y-Network's request assembly (the >10 MiB path spools to a temporary file).
        let request = BigMultipart(multipart: form)
        let assembled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            _ = try RequestAssembler(
                configuration: NetworkManagerConfiguration(basePath: "https://api.example.com")
            ).build(request)
        }
        await #expect(throws: CancellationError.self) { try await assembled.value }
    }

    @Test("A file part given as a symbolic link sends the file it points to, at its size")
    func symbolicLinkPart() throws {
        let target = try makePatternFile(size: 50_000)
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("yn-link-\(UUID())")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        defer {
            try? FileManager.default.removeItem(at: target)
            try? FileManager.default.removeItem(at: link)
        }
        let form = MultipartForm(
            parts: ["f": .file(info: MultipartFileInfo(fileName: "l", fileURL: link, mimeType: "x/y"))],
            boundary: "link-boundary")
        let assembler = RequestAssembler(configuration: NetworkManagerConfiguration(basePath: "https://h.example"))
        let built = try assembler.build(Upload(multipart: form))
        let body = try #require(built.request.httpBody)
        #expect(body.count == Int(try form.contentLength()))
        let parts = try #require(parseMultipart(body, boundary: "link-boundary"))
        #expect(parts.first?.body == (try Data(contentsOf: target)))
    }

    private func temporaryMultipartFiles() -> Set<String> {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
        // The transfers' private directories (`mkdtemp`): `ynetwork-` and six characters.
        return Set(names.filter { $0.hasPrefix("ynetwork-") && $0.count == "ynetwork-".count + 6 })
    }
}

private struct BigMultipart: MultipartRequest {
    var path: PathRepresentable { "multipart" }
    var method: HttpMethod { .POST }
    let multipart: MultipartBuilder
}
