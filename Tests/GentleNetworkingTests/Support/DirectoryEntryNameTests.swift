import Foundation
import Testing

@testable import GentleNetworking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `readdir` hands out records only as long as their names, packed in its buffer: an entry's
/// name must be read up to its NUL, never by copying the whole `d_name` array (corelibs'
/// `Process.run()` does, and crashed a test run reading past the buffer).
@Suite("Directory entry names are read in place")
struct DirectoryEntryNameTests {
    @Test("Every name of a directory, a 255-byte one included, as readdir returns them")
    func namesOfADirectory() throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let long = String(repeating: "n", count: 255)
        let names = ["a", "é-ü", long, ".hidden"]
        for name in names {
            try Data().write(to: directory.appendingPathComponent(name))
        }
        let stream = try #require(opendir(directory.path))
        defer { closedir(stream) }
        var seen: [String] = []
        while let entry = readdir(stream) {
            seen.append(try #require(directoryEntryName(entry)))
        }
        #expect(Set(seen) == Set(names + [".", ".."]))
    }

    #if os(Linux)
        /// An entry whose name ends one byte before an unreadable page, as the last record of
        /// `readdir`'s buffer can: the name is read, and nothing past it (copying `d_name`'s
        /// 256 bytes faults here).
        @Test("An entry right before an unmapped page is read without touching that page")
        func entryAtTheEndOfAMapping() throws {
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let mapping = try #require(
                mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
            #expect(mapping != MAP_FAILED)
            defer { munmap(mapping, 2 * page) }
            #expect(mprotect(mapping.advanced(by: page), page, PROT_NONE) == 0)
            let nameOffset = try #require(MemoryLayout<dirent>.offset(of: \dirent.d_name))
            let name = Array("last-entry".utf8) + [0]
            // The record starts so that its name's NUL is the page's last byte.
            let recordStart = page - nameOffset - name.count
            let record = mapping.advanced(by: recordStart)
            record.initializeMemory(as: UInt8.self, repeating: 0, count: nameOffset)
            for (index, byte) in name.enumerated() {
                record.storeBytes(of: byte, toByteOffset: nameOffset + index, as: UInt8.self)
            }
            #expect(directoryEntryName(record.assumingMemoryBound(to: dirent.self)) == "last-entry")
        }
    #endif
}
