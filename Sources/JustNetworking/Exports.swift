// Re-exports Foundation (and FoundationNetworking on Linux) so that `import JustNetworking` alone
// gives callers `URL`, `URLRequest`, `URLSession`, `DispatchQueue` and `JSONDecoder`, as the README
// samples assume. GentleNetworking itself is not re-exported: its `HTTPMethod` would clash with ours.
@_exported import Foundation

#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif
