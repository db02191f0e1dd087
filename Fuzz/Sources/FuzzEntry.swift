import Foundation

/// The targets, by the name `scripts/fuzz` passes in `GENTLE_FUZZ_TARGET`.
let fuzzTargets: [String: @Sendable (FuzzInput) -> Void] = [
    "retry-after": RetryAfterTarget.run,
    "etag": ETagTarget.run,
    "curl-head": CurlHeadTarget.run,
    "request-parser": RequestParserTarget.run,
    "jwt": JWTTarget.run,
    "url-builder": URLBuilderTarget.run,
    "multipart": MultipartTarget.run,
    "redactor": RedactorTarget.run,
    "encoding": EncodingTarget.run,
    "event-stream": EventStreamTarget.run,
]

/// The target this process runs, chosen once from the environment.
let selectedFuzzTarget: @Sendable (FuzzInput) -> Void = {
    let name = ProcessInfo.processInfo.environment["GENTLE_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        let known = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("GENTLE_FUZZ_TARGET must be one of: \(known)\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point: runs the selected target on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    selectedFuzzTarget(FuzzInput(bytes))
    return 0
}

/// Stops the process with a message libFuzzer reports as a crash: an invariant was broken.
func violated(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz invariant violated: \(message())", file: file, line: line)
}
