// swift-tools-version: 6.0
// The seed-compatibility harness: client code and unit tests written the way users of the three
// seed libraries (GentleNetworking, JustNetworking, Y-Network) write them, compiled against this
// repository's modules with only the import changed, in the Swift 6 and the Swift 5 language
// modes. `scripts/seed-compat` builds and runs it.
//
// Each client's sources live once, in `Sources/<Client>` and `Tests/<Client>Tests`; the Swift 5
// targets' directories (`<Client>5`, `<Client>5Tests`) are symbolic links to them. SwiftPM
// refuses two targets whose `path:` holds the same files ("overlapping sources"), but a linked
// directory is a path of its own, so one set of files compiles as two modules, one per mode.
// Where the two modes need different code (what Swift 6 asks of users), the file says
// `#if swift(>=6)`, which tests the language mode, not the compiler.
import PackageDescription

/// The Swift 6 client targets: warnings are errors, so a Swift 6-mode user of our modules is
/// never left with warnings they cannot fix.
let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6), .unsafeFlags(["-warnings-as-errors"])]
/// The Swift 5 client targets: warnings are shown (the script prints them), not errors.
let swift5: [SwiftSetting] = [.swiftLanguageMode(.v5)]
/// The tests of the Swift 5 targets import the `…5` client modules.
let swift5Tests: [SwiftSetting] = swift5 + [.define("COMPAT_SWIFT5")]

/// One client in both language modes: `name` and `name5`, each with its test target.
func client(_ name: String, products: [String]) -> [Target] {
    let dependencies: [Target.Dependency] = products.map { .product(name: $0, package: "GentleNetworking") }
    return [
        .target(name: name, dependencies: dependencies, swiftSettings: swift6),
        .target(name: name + "5", dependencies: dependencies, swiftSettings: swift5),
        .testTarget(
            name: name + "Tests", dependencies: [.target(name: name)] + dependencies, swiftSettings: swift6),
        .testTarget(
            name: name + "5Tests", dependencies: [.target(name: name + "5")] + dependencies,
            swiftSettings: swift5Tests),
    ]
}

let package = Package(
    name: "Compat",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    dependencies: [.package(name: "GentleNetworking", path: "..")],
    targets: client("JustClient", products: ["JustNetworking"])
        + client("GentleClient", products: ["GentleNetworking"])
        + client("YClient", products: ["YNetwork"])
)
