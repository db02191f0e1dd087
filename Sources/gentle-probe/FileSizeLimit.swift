import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The file size limit of the disk-full probes (`RLIMIT_FSIZE`): the disk is "full" past it.
enum FileSizeLimit {
    /// Limits every file this process writes to `maxBytes`; a write past it then fails with
    /// `EFBIG` instead of killing the process (`SIGXFSZ` ignored). Exits with 2 if it cannot.
    static func apply(_ maxBytes: rlim_t) {
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: maxBytes, rlim_max: maxBytes)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else {
            FileHandle.standardError.write(Data("setrlimit failed: errno \(errno)\n".utf8))
            exit(2)
        }
    }
}
