import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

#if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
    /// Linux: whether a cookie's `Domain` is acceptable for a host, by the Public Suffix List
    /// (a cookie for `com`, `co.uk` or `github.io` would be sent to every site under it).
    ///
    /// The list is libpsl's (the system's list file, else its built-in one), as libcurl's own
    /// cookie engine uses it, loaded
    /// at run time (`libpsl.so.5`, a dependency of libcurl on Debian, Ubuntu and Fedora), so
    /// building needs no headers of it. Where it cannot be loaded, only a domain equal to the
    /// host is allowed (a cookie for a parent domain is refused rather than risked).
    enum PublicSuffixList {
        private typealias Builtin = @convention(c) () -> OpaquePointer?
        private typealias Latest = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
        private typealias IsPublicSuffix = @convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> Int32
        private typealias Acceptable =
            @convention(c) (OpaquePointer?, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32

        /// libpsl's list and check, or `nil` where the library is not installed.
        private struct Library: @unchecked Sendable {
            // @unchecked: the built-in list is immutable, and libpsl reads it from any thread.
            let list: OpaquePointer
            let acceptable: Acceptable
            let isPublicSuffix: IsPublicSuffix
        }

        private static let library: Library? = {
            guard let handle = dlopen("libpsl.so.5", RTLD_NOW | RTLD_LOCAL),
                let builtinSymbol = dlsym(handle, "psl_builtin"),
                let acceptableSymbol = dlsym(handle, "psl_is_cookie_domain_acceptable"),
                let suffixSymbol = dlsym(handle, "psl_is_public_suffix")
            else { return nil }
            // The system's list file where there is one (newer than the built-in list), as
            // libcurl does; the built-in one otherwise.
            let latest = dlsym(handle, "psl_latest").map { unsafeBitCast($0, to: Latest.self) }
            guard let list = latest?(nil) ?? unsafeBitCast(builtinSymbol, to: Builtin.self)() else { return nil }
            return Library(
                list: list, acceptable: unsafeBitCast(acceptableSymbol, to: Acceptable.self),
                isPublicSuffix: unsafeBitCast(suffixSymbol, to: IsPublicSuffix.self))
        }()

        /// Whether the list is loaded (tests check that the rule below is the list's).
        static var isLoaded: Bool { library != nil }

        /// Whether a cookie from `host` may be for `domain` (both lowercased; `domain` without
        /// its leading dot, a suffix of `host` after a dot): not a public suffix, by libpsl's
        /// `psl_is_cookie_domain_acceptable`; without libpsl, only `domain == host`.
        ///
        /// A trailing dot (a fully qualified name) is dropped from both first: libpsl does not,
        /// and accepted `github.io.` from `evil.github.io.` (`com.` it refuses).
        static func allowsCookie(forDomain domain: String, host: String) -> Bool {
            let (domain, host) = (withoutTrailingDot(domain), withoutTrailingDot(host))
            guard !domain.isEmpty, !host.isEmpty else { return false }
            guard let library else { return domain == host }
            return library.acceptable(library.list, host, domain) == 1
        }

        /// Whether `domain` (lowercased) is a public suffix; without libpsl, whether it has a
        /// single label (`com`, `localhost`). A trailing dot is dropped first (`github.io.` is
        /// one); an empty name counts as one.
        static func isPublicSuffix(_ domain: String) -> Bool {
            let domain = withoutTrailingDot(domain)
            guard !domain.isEmpty else { return true }
            guard let library else { return !domain.contains(".") }
            return library.isPublicSuffix(library.list, domain) == 1
        }

        /// `name` without one trailing dot.
        static func withoutTrailingDot(_ name: String) -> String {
            name.hasSuffix(".") ? String(name.dropLast()) : name
        }
    }
#endif
