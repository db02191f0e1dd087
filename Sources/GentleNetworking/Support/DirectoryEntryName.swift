import Foundation

/// The name of a directory entry `readdir` returned, read in place up to its NUL.
///
/// Never copy `entry.pointee.d_name` (as `withUnsafeBytes(of: entry.pointee.d_name)` does): that
/// loads the whole 256-byte array, but `readdir` hands out records packed in its buffer, each only
/// as long as its name, so the copy of an entry near the end of the buffer reads past it, into
/// memory that may not be mapped. corelibs' `Process.run()` does that copy for every entry of
/// `/proc/self/fd` and crashed a test run with ~1,400 descriptors open ("Bad pointer
/// dereference" in `memcpy`).
///
/// - Returns: The name (invalid UTF-8 repaired), or `nil` if the platform's `dirent` has no
///   `d_name` offset to read from.
package func directoryEntryName(_ entry: UnsafeMutablePointer<dirent>) -> String? {
    guard let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { return nil }
    return String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
}
