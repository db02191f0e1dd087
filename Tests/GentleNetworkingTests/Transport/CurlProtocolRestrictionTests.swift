#if canImport(CCurl)
    import CCurl
    import Foundation
    import Testing

    /// libcurl itself is restricted to HTTP and HTTPS (our URL checks run first, but a handle the
    /// transport configured must refuse any other scheme on its own, for the request and for a
    /// redirect libcurl would follow).
    @Suite("libcurl's protocol restriction")
    struct CurlProtocolRestrictionTests {
        @Test("A handle restricted by the transport's helper refuses file:, and still allows http:")
        func restriction() throws {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "gentle-proto-\(UUID().uuidString)")
            try Data("secret file".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let handle = try #require(curl_easy_init())
            defer { curl_easy_cleanup(handle) }
            #expect(gn_easy_restrict_to_http(handle) == CURLE_OK)
            #expect(gn_easy_setopt_string(handle, CURLOPT_URL, file.absoluteString) == CURLE_OK)
            #expect(gn_easy_setopt_long(handle, CURLOPT_NOBODY, 1) == CURLE_OK)
            #expect(curl_easy_perform(handle) == CURLE_UNSUPPORTED_PROTOCOL)

            // Unrestricted, the same handle reads the file: the refusal above is the restriction's.
            curl_easy_reset(handle)
            #expect(gn_easy_setopt_string(handle, CURLOPT_URL, file.absoluteString) == CURLE_OK)
            #expect(gn_easy_setopt_long(handle, CURLOPT_NOBODY, 1) == CURLE_OK)
            #expect(curl_easy_perform(handle) == CURLE_OK)
        }
    }
#endif
