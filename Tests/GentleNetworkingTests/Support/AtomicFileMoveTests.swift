import Foundation
import Testing

@testable import GentleNetworking

/// `AtomicFile.move(_:replacing:)`, what Apple's background downloads use to put a file in place
/// (they removed what was there first, then moved: a failed move lost it, and a symbolic link
/// to a directory was followed). The same rule as every other download path: one `rename`.
@Suite("AtomicFile.move: replaces a file or a link in one step, never a directory, removes nothing first")
struct AtomicFileMoveTests {
    @Test("A file and a symbolic link are replaced (the link itself, not its target)")
    func replaces() throws {
        let directory = try makeScratchDirectory("atomic-move")
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("download.tmp").path
        let destination = directory.appendingPathComponent("file.txt").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
        try Data("new".utf8).write(to: URL(fileURLWithPath: source))
        try AtomicFile.move(source, replacing: destination)
        #expect(try String(contentsOfFile: destination, encoding: .utf8) == "new")
        #expect(!FileManager.default.fileExists(atPath: source))

        let target = directory.appendingPathComponent("target.txt").path
        try Data("target".utf8).write(to: URL(fileURLWithPath: target))
        let link = directory.appendingPathComponent("link.txt").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try Data("through".utf8).write(to: URL(fileURLWithPath: source))
        try AtomicFile.move(source, replacing: link)
        #expect(try String(contentsOfFile: link, encoding: .utf8) == "through")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "target")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil, "now a file")
    }

    @Test("A directory (or a link to one) is refused and kept with what it holds; a failed move leaves the old file")
    func refuses() throws {
        let directory = try makeScratchDirectory("atomic-move")
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("Documents")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: folder.appendingPathComponent("keep.txt"))
        let source = directory.appendingPathComponent("download.tmp").path
        try Data("new".utf8).write(to: URL(fileURLWithPath: source))
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.move(source, replacing: folder.path) }
        #expect(try String(contentsOf: folder.appendingPathComponent("keep.txt"), encoding: .utf8) == "keep")

        // A missing source: the destination's file is untouched (nothing was removed first).
        let destination = directory.appendingPathComponent("file.txt").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
        #expect(throws: AtomicFile.Failure.self) {
            try AtomicFile.move(directory.appendingPathComponent("missing").path, replacing: destination)
        }
        #expect(try String(contentsOfFile: destination, encoding: .utf8) == "old")
    }

    @Test(
        "Across file systems (tmpfs to /tmp): copied as a new 0600 file, synced, renamed; an unreadable source keeps the old"
    )
    func acrossFileSystems() throws {
        var shm = stat()
        try #require(stat("/dev/shm", &shm) == 0, "the test needs tmpfs at /dev/shm, another file system than /tmp")
        let other = URL(fileURLWithPath: "/dev/shm/gentle-move-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: other) }
        let directory = try makeScratchDirectory("atomic-move")
        defer { try? FileManager.default.removeItem(at: directory) }
        var local = stat()
        #expect(stat(directory.path, &local) == 0 && local.st_dev != shm.st_dev, "two file systems")

        let source = other.appendingPathComponent("download.tmp").path
        let body = patternBytes(300_000, multiplier: 7)
        try body.write(to: URL(fileURLWithPath: source))
        #expect(chmod(source, 0o644) == 0)
        let destination = directory.appendingPathComponent("file.bin").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
        try AtomicFile.move(source, replacing: destination)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == body)
        var info = stat()
        #expect(lstat(destination, &info) == 0 && info.st_mode & 0o777 == 0o600, "not the source's 0644")
        #expect(FileManager.default.fileExists(atPath: source), "the source is left to its owner")

        // A source that cannot be read (a directory): the old file stays, nothing is left beside it.
        let unreadable = other.appendingPathComponent("folder").path
        try FileManager.default.createDirectory(atPath: unreadable, withIntermediateDirectories: false)
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.move(unreadable, replacing: destination) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == body)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["file.bin"])
    }
}
