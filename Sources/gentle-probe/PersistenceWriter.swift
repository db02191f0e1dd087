import Foundation
import GentleNetworking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The writer side of the kill -9 tests: saves numbered values into a store, through the
/// library's own API, until the parent kills it.
///
/// Usage: `gentle-probe persist-writer <credentials|etag> <directory> <first-number> [umask-octal]`
///
/// It prints `started umask=<octal>` once the store is open, then `writing <n>` before and
/// `wrote <n>` after each save, each line with one unbuffered `write(2)`, so the parent knows
/// which values may be on disk when the kill lands: the last announced one, or the one before.
enum PersistenceWriter {
    /// The value saved for `number`: recognisable, and of a size that varies with it, so a torn
    /// or mixed write cannot pass for a good one.
    static func value(_ number: Int) -> String {
        "value-\(number)-" + String(repeating: String(number.magnitude % 10), count: 64 + Int(number.magnitude % 4096))
    }

    static func run(_ arguments: [String]) async -> Never {
        // `credentials-keys <directory> <count> <prefix>`: saves `<prefix>/k0` … `k<count-1>`,
        // then exits 0, for the test of two processes saving different keys at once.
        if arguments.count == 4, arguments[0] == "credentials-keys", let count = Int(arguments[2]) {
            let store = FileCredentialStore(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
            for index in 0..<max(0, count) {
                do {
                    try store.setValue("v\(index)", for: "\(arguments[3])/k\(index)")
                } catch {
                    fail("error \(error)")
                }
            }
            exit(0)
        }
        guard arguments.count >= 3, let first = Int(arguments[2]) else {
            fail("usage: gentle-probe persist-writer <credentials|etag> <directory> <first-number> [umask-octal]")
        }
        if arguments.count >= 4 {
            guard let mask = mode_t(arguments[3], radix: 8) else { fail("bad umask \(arguments[3])") }
            umask(mask)
        }
        let previous = umask(0)
        umask(previous)
        let directory = URL(fileURLWithPath: arguments[1], isDirectory: true)
        let save: (Int) async throws -> Void
        switch arguments[0] {
        case "credentials":
            let store = FileCredentialStore(directory: directory)
            save = { number in try store.setValue(value(number), for: "token") }
        case "etag":
            let store = DiskETagStore(directory: directory)
            save = { number in
                let response = CachedResponse(
                    body: Data(value(number).utf8), statusCode: 200, headers: ["ETag": "\"\(number)\""], url: nil,
                    etag: "\"\(number)\"", storedAt: Date())
                await store.store(response, for: "key")
            }
        default:
            fail("unknown store \(arguments[0])")
        }
        say("started umask=\(String(previous, radix: 8))")
        var number = first
        while number < Int.max {
            number += 1
            say("writing \(number)")
            do {
                try await save(number)
            } catch {
                say("error \(error)")
                exit(1)
            }
            say("wrote \(number)")
        }
        exit(0)
    }

    /// One line to standard output, with one unbuffered write.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(2)
    }
}
