import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A writer killed between creating its temporary file and renaming it leaves a full copy of
/// what it was writing (a token, a cached body). The next write through the store removes the
/// temporary files of dead writers, and only those.
@Suite("Temporary files of killed writers are removed")
struct AbandonedTemporaryFileTests {
    /// The id of a process that has exited (and been reaped).
    static func deadProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try ProcessLauncher.run(process)
        process.waitUntilExit()
        return process.processIdentifier
    }

    static func plant(_ name: String, in directory: URL, _ contents: String) throws {
        let path = directory.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
        chmod(path, 0o600)
    }

    static func names(in directory: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
    }

    @Test("Deleting a credential also removes a dead writer's copy of it; a live writer's file stays")
    func credentialStore() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        let store = FileCredentialStore(directory: directory)
        try store.setValue("tok-abandoned-secret", for: "token")
        let dead = "credentials.json.tmp-\(try Self.deadProcessID())-4242"
        let live = "credentials.json.tmp-\(getpid())-77"
        let foreign = "notes.txt.tmp-\(try Self.deadProcessID())-1"
        for name in [dead, live, foreign] {
            try Self.plant(name, in: directory, #"{"entries":{"token":"tok-abandoned-secret"},"version":1}"#)
        }

        try store.setValue(nil, for: "token")

        let left = Self.names(in: directory)
        #expect(!left.contains(dead), "the killed writer's copy of the token is gone: \(left)")
        #expect(left.contains(live), "a live writer's temporary file is left alone")
        #expect(left.contains(foreign), "files that are not the store's are left alone")
        #expect(try store.value(for: "token") == nil)
    }

    @Test("Opening the ETag store removes dead writers' temporary entries; live ones and other files stay")
    func etagStore() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("etags")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let entry = "0123abcd.etag"
        let dead = entry + ".tmp-\(try Self.deadProcessID())-99"
        let live = entry + ".tmp-\(getpid())-98"
        let foreign = "report.pdf.tmp-\(try Self.deadProcessID())-97"
        for name in [dead, live, foreign] {
            try Self.plant(name, in: directory, "GNETAG2\n cached body with the token tok-abandoned-secret")
        }

        let store = DiskETagStore(directory: directory)
        #expect(await store.cachedResponse(for: "anything") == nil)

        let left = Self.names(in: directory)
        #expect(!left.contains(dead), "the killed writer's temporary entry is gone: \(left)")
        #expect(left.contains(live))
        #expect(left.contains(foreign))
    }

    @Test("Another PID namespace's temporary file is judged by its age, never by a process id this one cannot see")
    func otherNamespace() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        let store = FileCredentialStore(directory: directory)
        try store.setValue("tok-1", for: "token")
        let dead = try Self.deadProcessID()
        let own = AtomicFile.pidNamespace
        #if os(Linux)
            #expect(own != 0, "Linux has /proc/self/ns/pid")
        #endif
        // A writer in a container sharing the directory: its process id is dead *here*.
        let foreignFresh = "credentials.json.tmp-\(dead)-\(own &+ 1)-11"
        let foreignOld = "credentials.json.tmp-\(dead)-\(own &+ 1)-12"
        let ownDead = "credentials.json.tmp-\(dead)-\(own)-13"
        let ownLive = "credentials.json.tmp-\(getpid())-\(own)-14"
        for name in [foreignFresh, foreignOld, ownDead, ownLive] {
            try Self.plant(name, in: directory, #"{"entries":{"token":"tok-1"},"version":1}"#)
        }
        // Two hours old.
        var times = [timeval(tv_sec: time(nil) - 7200, tv_usec: 0), timeval(tv_sec: time(nil) - 7200, tv_usec: 0)]
        #expect(utimes(directory.appendingPathComponent(foreignOld).path, &times) == 0)

        try store.setValue("tok-2", for: "token")

        let left = Self.names(in: directory)
        #expect(left.contains(foreignFresh), "a live writer elsewhere: its file is left alone: \(left)")
        #expect(!left.contains(foreignOld), "an hour old: abandoned, whatever its process id: \(left)")
        #expect(!left.contains(ownDead), "this namespace, a dead writer: \(left)")
        #expect(left.contains(ownLive))
        #expect(
            AtomicFile.temporaryPath(for: "/d/credentials.json").hasPrefix(
                "/d/credentials.json.tmp-\(getpid())-\(own)-"))
    }
}
