import Foundation

@testable import GentleNetworking
@testable import YNetwork

/// The Y-Network URL builder: how a `NetworkRequest`'s base path, path and query parameters
/// become a URL.
///
/// Input: byte 0 picks the base (one of four fixed ones, none, or the first line), byte 1 the
/// request type (JSON or form, where spaces are `+`); then the path line, then one parameter per
/// line: `key=value` (a string), `key=true`/`key=false`, `key=#42` (an integer), `key=a|b|c`
/// (an array).
///
/// Asserts: no trap; only YNetwork's `NetworkError` is thrown; a URL is `http(s)` with a host;
/// a relative path never changes the base's host and the URL starts with the base; the query
/// decodes back to exactly the parameters, sorted by key, `true` bare (left out for an empty
/// key) and `false` left out.
enum URLBuilderTarget {
    static let bases = [
        "https://api.example.com", "https://api.example.com/v1/", "http://127.0.0.1:8080/base//",
        "HTTPS://Example.COM:443/a%20b",
    ]

    enum Value: Sendable {
        case text(String)
        case flag(Bool)
        case number(Int)
        case list([String])
    }

    struct Request: NetworkRequest {
        var basePath: PathRepresentable?
        var path: PathRepresentable
        var requestType: RequestContentType
        var values: [(String, Value)]

        var queryParameters: ParametersBuilder? {
            guard !values.isEmpty else { return nil }
            var parameters: Parameters = [:]
            for (key, value) in values {
                switch value {
                case .text(let text): parameters[key] = text
                case .flag(let flag): parameters[key] = flag
                case .number(let number): parameters[key] = number
                case .list(let list): parameters[key] = list
                }
            }
            return parameters
        }
    }

    static func run(_ input: FuzzInput) {
        var input = input
        let baseChoice = input.choice(6)
        let isForm = input.byte() % 2 == 1
        var lines = input.lines()
        var base: String?
        var isFixedBase = false
        switch baseChoice {
        case 0..<bases.count:
            base = bases[baseChoice]
            isFixedBase = true
        case bases.count: base = nil
        default: base = lines.isEmpty ? nil : lines.removeFirst()
        }
        let path = lines.isEmpty ? "" : lines.removeFirst()
        var values: [(String, Value)] = []
        var seen: Set<String> = []
        for line in lines {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let key = parts[0]
            guard seen.insert(key).inserted else { continue }
            let raw = parts.count > 1 ? parts[1] : ""
            let value: Value
            if raw == "true" || raw == "false" {
                value = .flag(raw == "true")
            } else if raw.hasPrefix("#"), let number = Int(raw.dropFirst()) {
                value = .number(number)
            } else if raw.contains("|") {
                value = .list(raw.components(separatedBy: "|"))
            } else {
                value = .text(raw)
            }
            values.append((key, value))
        }
        let request = Request(
            basePath: base, path: path, requestType: isForm ? .formURLEncoded : .JSON, values: values)
        let url: URL
        do {
            url = try URLBuilder().url(for: request, configuration: nil)
        } catch is YNetwork.NetworkError {
            return
        } catch {
            violated("a \(type(of: error)) thrown: \(error)")
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host?.isEmpty == false
        else {
            violated("not an http(s) URL with a host: \(url.absoluteString)")
        }
        guard isFixedBase, let base, !path.isAbsoluteURLPath else { return }
        let baseURL = URL(string: base)!
        if url.host?.lowercased() != baseURL.host?.lowercased() || url.port != baseURL.port {
            violated("the path \(path.debugDescription) moved the request to \(url.absoluteString)")
        }
        var trimmedBase = base
        while trimmedBase.hasSuffix("/") { trimmedBase.removeLast() }
        if !url.absoluteString.hasPrefix(trimmedBase) { violated("\(url.absoluteString) does not start with the base") }
        guard !path.contains("?"), !path.contains("#"), !values.isEmpty else { return }
        checkQuery(of: url, values: values, isForm: isForm)
    }

    static func checkQuery(of url: URL, values: [(String, Value)], isForm: Bool) {
        // Y-Network's order: each field's encoded text (`name=value`, a bare `name`, or a list's
        // pairs in their order), sorted as text; compared here in decoded form.
        func encoded(_ text: String) -> String { PercentEncoding.formComponent(text, spaceAsPlus: isForm) }
        var groups: [(sortKey: String, pairs: [String])] = []
        for (key, value) in values {
            var decodedPairs: [String] = []
            var encodedPairs: [String] = []
            func add(_ text: String?) {
                decodedPairs.append(text.map { key + "=" + $0 } ?? key)
                encodedPairs.append(text.map { encoded(key) + "=" + encoded($0) } ?? encoded(key))
            }
            switch value {
            case .text(let text): add(text)
            // A bare empty name is an empty pair, which the builder leaves out.
            case .flag(true): if !key.isEmpty { add(nil) }
            case .flag(false): break
            case .number(let number): add("\(number)")
            case .list(let list): list.forEach { add($0) }
            }
            if !decodedPairs.isEmpty { groups.append((encodedPairs.joined(separator: "&"), decodedPairs)) }
        }
        let expected = groups.sorted { $0.sortKey < $1.sortKey }.flatMap(\.pairs)
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        let pairs = query.isEmpty ? [] : query.split(separator: "&", omittingEmptySubsequences: false)
        let decoded = pairs.map { pair -> String in
            pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { part -> String in
                let text = isForm ? part.replacingOccurrences(of: "+", with: " ") : String(part)
                return text.removingPercentEncoding ?? "<undecodable \(text)>"
            }.joined(separator: "=")
        }
        if decoded != expected { violated("query \(query.debugDescription) decodes to \(decoded), not \(expected)") }
    }
}
