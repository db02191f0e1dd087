import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What we persist survives `kill -9` at any point: a `gentle-probe persist-writer` child saves
/// numbered values in a loop and is killed after a random delay; the parent then reads through
/// the library's own API and must get the value before the kill or the one being written, never
/// a corrupt one or an error, with the file 0600 in a 0700 directory.
///
/// CI runs `GENTLE_KILL9_KILLS` kills per store (150 when unset), and a third as many under
/// `umask 000` (`GENTLE_KILL9_UMASK_KILLS`); the delays come from a seeded generator whose seed
/// is printed. The full run, and the replay of a failure:
///
/// ```
/// GENTLE_KILL9_KILLS=1000 GENTLE_KILL9_UMASK_KILLS=1000 GENTLE_KILL9_SEED=<seed> \
///     swift test --filter KillNinePersistenceTests
/// ```
@Suite("kill -9 never corrupts the credential store or the ETag store", .serialized)
struct KillNinePersistenceTests {
    enum Store: String, CaseIterable, CustomStringConvertible {
        case credentials
        case etag
        var description: String { rawValue }
    }

    struct Tally: CustomStringConvertible {
        var kills = 0
        var readsOld = 0
        var readsNew = 0
        var corrupt = 0
        var strayTemporaries = 0
        /// Kills that landed before the first save, or between announcing a save and finishing it.
        var beforeFirstSave = 0
        var midSave = 0
        var savesCompleted = 0
        var failures: [String] = []
        var description: String {
            "kills: \(kills), reads old: \(readsOld), reads new: \(readsNew), corrupt: \(corrupt)"
        }
    }

    /// The writer's value for `number`, as `PersistenceWriter.value` makes it in the probe.
    static func value(_ number: Int) -> String {
        "value-\(number)-" + String(repeating: String(number % 10), count: 64 + number % 4096)
    }

    /// The number a stored value stands for, when it is exactly what the writer saves.
    static func number(of stored: String) -> Int? {
        let parts = stored.split(separator: "-", maxSplits: 2)
        guard parts.count == 3, parts[0] == "value", let number = Int(parts[1]), value(number) == stored else {
            return nil
        }
        return number
    }

    static var kills: Int {
        ProcessInfo.processInfo.environment["GENTLE_KILL9_KILLS"].flatMap { Int($0) } ?? 150
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["GENTLE_KILL9_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...9_999_999)
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    /// The stored value's number, read through the library by a fresh store (no cache).
    static func read(_ store: Store, in directory: URL) async throws -> Int? {
        let stored: String?
        switch store {
        case .credentials:
            stored = try FileCredentialStore(directory: directory).value(for: "token")
        case .etag:
            stored = await DiskETagStore(directory: directory).cachedResponse(for: "key").map {
                String(decoding: $0.body, as: UTF8.self)
            }
        }
        guard let stored else { return nil }
        guard let number = number(of: stored) else {
            throw TransportError(.other, url: nil, message: "not a value the writer saves: \(stored.prefix(40))…")
        }
        return number
    }

    /// The files the store must keep private, and the directory.
    static func privateFiles(_ store: Store, in directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        switch store {
        case .credentials:
            return names.filter { $0 == "credentials.json" }.map { directory.appendingPathComponent($0).path }
        case .etag: return names.filter { $0.hasSuffix(".etag") }.map { directory.appendingPathComponent($0).path }
        }
    }

    /// Runs the kill loop for one store; `umask` is given to the child in octal.
    static func run(
        _ store: Store, kills: Int, seed: UInt64, umask childMask: String?, seeded: Bool
    ) async throws -> Tally {
        let probe = try SizeLimitMemoryTests.probePath()
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        // The child creates the directory (and its parent) itself, under its own umask.
        let directory = root.appendingPathComponent("fresh/gentle-networking", isDirectory: true)
        var current: Int?
        if seeded {
            current = 0
            switch store {
            case .credentials:
                let seededStore = FileCredentialStore(directory: directory)
                try seededStore.setValue(value(0), for: "token")
                try seededStore.setValue("keep-me", for: "other")
            case .etag:
                await DiskETagStore(directory: directory).store(
                    CachedResponse(
                        body: Data(value(0).utf8), statusCode: 200, headers: [:], url: nil, etag: "\"0\"",
                        storedAt: Date()),
                    for: "key")
            }
        }
        var random = SplitMix64(seed: seed &+ (store == .etag ? 1 : 0))
        var tally = Tally()
        for kill in 0..<kills {
            let delay = UInt32(random.next() % 20_000)  // µs after the child reported it started
            let start = current ?? 0
            var arguments = ["persist-writer", store.rawValue, directory.path, String(start)]
            if let childMask { arguments.append(childMask) }
            let childArguments = arguments
            let output = try await offCooperativePool {
                try killedChildOutput(probe, childArguments, afterMicroseconds: delay)
            }
            tally.kills += 1
            let context = "\(store) kill \(kill) (seed \(seed), delay \(delay) µs)"
            if let childMask, !output.contains("started umask=\(String(mode_t(childMask, radix: 8) ?? 0, radix: 8))\n")
            {
                tally.failures.append(
                    "\(context): the child did not run under umask \(childMask): \(output.prefix(200))")
            }
            // The values that may be on disk: the last one announced, or the one before it.
            var announced: Int?
            var completed: Int?
            for line in output.split(separator: "\n") {
                if line.hasPrefix("writing ") { announced = Int(line.dropFirst(8)) }
                if line.hasPrefix("wrote ") { completed = Int(line.dropFirst(6)) }
                if line.hasPrefix("error ") { tally.failures.append("\(context): the writer failed: \(line)") }
            }
            if announced == nil { tally.beforeFirstSave += 1 } else if completed != announced { tally.midSave += 1 }
            if let completed { tally.savesCompleted += completed - start }
            let newValue = announced
            let oldValue: Int? = announced.map { $0 - 1 == start ? current : $0 - 1 } ?? current
            let read: Int?
            do {
                read = try await Self.read(store, in: directory)
            } catch {
                tally.corrupt += 1
                tally.failures.append("\(context): the read failed: \(error)")
                continue
            }
            if let newValue, read == newValue {
                tally.readsNew += 1
            } else if read == oldValue, completed != announced || announced == nil {
                tally.readsOld += 1
            } else {
                tally.corrupt += 1
                tally.failures.append(
                    "\(context): read \(read.map(String.init) ?? "nothing"), expected \(oldValue.map(String.init) ?? "nothing")"
                        + " or \(newValue.map(String.init) ?? "-") (completed \(completed.map(String.init) ?? "-"))")
            }
            if store == .credentials, seeded,
                (try? FileCredentialStore(directory: directory).value(for: "other")) != "keep-me"
            {
                tally.failures.append("\(context): another entry of the file was lost")
            }
            if let directoryMode = mode(directory.path), directoryMode != 0o700 {
                tally.failures.append("\(context): the directory has mode \(String(directoryMode, radix: 8))")
            }
            for path in privateFiles(store, in: directory) where mode(path) != 0o600 {
                tally.failures.append("\(context): \(path) has mode \(String(mode(path) ?? 0, radix: 8))")
            }
            current = read
        }
        // A killed writer's temporary file holds a copy of the value; the next writer removes it.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        tally.strayTemporaries = names.filter { $0.contains(".tmp-") }.count
        return tally
    }

    /// Starts the writer, waits for its `started` line, sleeps `delay` µs, sends SIGKILL, and
    /// returns everything it printed.
    static func killedChildOutput(
        _ probe: String, _ arguments: [String], afterMicroseconds delay: UInt32
    ) throws
        -> String
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try ProcessLauncher.run(process)
        var received = Data()
        while !String(decoding: received, as: UTF8.self).contains("started") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        usleep(delay)
        kill(process.processIdentifier, SIGKILL)
        received.append(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        return String(decoding: received, as: UTF8.self)
    }

    static func report(_ store: Store, _ label: String, _ tally: Tally, seconds: Double, seed: UInt64) {
        print(
            "kill -9 \(store) (\(label)): \(tally); killed mid-save \(tally.midSave), before the first save "
                + "\(tally.beforeFirstSave), saves completed \(tally.savesCompleted); stray temporary files: "
                + "\(tally.strayTemporaries); seed \(seed), \(String(format: "%.1f", seconds)) s")
        for failure in tally.failures.prefix(10) {
            Issue.record(Comment(rawValue: failure))
        }
        #expect(tally.corrupt == 0)
        #expect(tally.failures.isEmpty, "\(tally.failures.count) failures")
        #expect(tally.readsOld + tally.readsNew == tally.kills)
        #expect(tally.strayTemporaries <= 1, "killed writers' temporary files are removed by the next writer")
    }

    @Test("Killed at random points, the store reads the old or the new value, 0600 in 0700", arguments: Store.allCases)
    func killLoop(store: Store) async throws {
        let seed = Self.seed
        let began = Date()
        let tally = try await Self.run(store, kills: Self.kills, seed: seed, umask: nil, seeded: true)
        Self.report(store, "umask inherited", tally, seconds: Date().timeIntervalSince(began), seed: seed)
    }

    @Test("The same under umask 000, with the child creating the directory", arguments: Store.allCases)
    func killLoopUnderOpenUmask(store: Store) async throws {
        let seed = Self.seed
        let began = Date()
        let kills =
            ProcessInfo.processInfo.environment["GENTLE_KILL9_UMASK_KILLS"].flatMap { Int($0) }
            ?? max(1, Self.kills / 3)
        let tally = try await Self.run(store, kills: kills, seed: seed, umask: "000", seeded: false)
        Self.report(store, "umask 000", tally, seconds: Date().timeIntervalSince(began), seed: seed)
    }
}

/// A small seeded generator (SplitMix64), so a run's kill delays can be replayed from its seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
