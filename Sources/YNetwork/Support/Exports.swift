// Re-exports Foundation (and FoundationNetworking on Linux), as GentleNetworking and
// JustNetworking do, so that a file importing only `YNetwork` (as Y-Network's own tests do, with
// XCTest) sees `URLRequest`, `URLSession` and `HTTPURLResponse` on Linux too.
@_exported import Foundation

#if canImport(FoundationNetworking)
    @_exported import FoundationNetworking
#endif
