import Foundation

@testable import GentleNetworking

#if canImport(Glibc)
    import Glibc
#endif

/// Looks at every file in a directory, over and over on a thread of its own, and records the
/// first few it saw with a mode open to group or others: another user needs only one such moment
/// to open a file and keep the descriptor.
final class FileModeWatcher: Sendable {
    private let stopped = Locked(false)
    private let finished = Locked(false)
    private let sightings = Locked<[String]>([])

    init(directory: URL) {
        let path = directory.path
        let stopped = self.stopped
        let sightings = self.sightings
        let finished = self.finished
        let thread = Thread {
            while !stopped.withLock({ $0 }) {
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { continue }
                for name in names {
                    var info = stat()
                    guard lstat(path + "/" + name, &info) == 0, info.st_mode & 0o077 != 0 else { continue }
                    let sighting = "\(name): \(String(info.st_mode & 0o777, radix: 8))"
                    sightings.withLock { if $0.count < 5 { $0.append(sighting) } }
                }
            }
            finished.withLock { $0 = true }
        }
        thread.start()
    }

    /// Stops watching and returns what was seen (at most five sightings).
    func stop() -> [String] {
        stopped.withLock { $0 = true }
        while !finished.withLock({ $0 }) { usleep(1000) }
        return sightings.withLock { $0 }
    }
}

/// A new empty directory in the temporary directory, for one test.
func makeScratchDirectory(_ prefix: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
    return directory
}

/// The permission bits of the file at `url` (not following a symbolic link), `nil` if none.
func permissionBits(_ url: URL) -> mode_t? {
    var info = stat()
    return lstat(url.path, &info) == 0 ? info.st_mode & 0o777 : nil
}
