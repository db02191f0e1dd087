// Re-exports Foundation (and FoundationNetworking on Linux) so that `import GentleNetworking`
// alone gives callers `URL`, `URLRequest`, `URLQueryItem` and `HTTPURLResponse`, as the
// README samples assume.
@_exported import Foundation

#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif
