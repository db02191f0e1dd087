// libcurl for Swift. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic,
// which Swift cannot call, so each use gets a typed inline wrapper here.
#ifndef GENTLE_CCURL_SHIM_H
#define GENTLE_CCURL_SHIM_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

typedef size_t (*gn_data_callback)(char *buffer, size_t size, size_t count, void *userdata);
typedef int (*gn_progress_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                                    curl_off_t ulnow);

static inline CURLcode gn_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gn_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gn_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gn_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gn_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode gn_easy_setopt_data_callback(CURL *handle, CURLoption option, gn_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
typedef int (*gn_seek_callback)(void *userdata, curl_off_t offset, int origin);
static inline CURLcode gn_easy_setopt_seek_callback(CURL *handle, gn_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}
static inline CURLcode gn_easy_setopt_progress_callback(CURL *handle, gn_progress_callback value) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
typedef int (*gn_prereq_callback)(void *userdata, char *primary_ip, char *local_ip, int primary_port,
                                  int local_port);
static inline CURLcode gn_easy_setopt_prereq_callback(CURL *handle, gn_prereq_callback value) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, value);
}
static inline CURLcode gn_easy_setopt_blob(CURL *handle, CURLoption option, void *data, size_t length) {
    struct curl_blob blob;
    blob.data = data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(handle, option, &blob);
}
/// Restricts the transfer, and any redirect libcurl would follow, to HTTP and HTTPS. The bitmask
/// options are deprecated in favour of the `_STR` ones, but the string forms are parsed and
/// looked up in libcurl's protocol table on every request (measured: 1.3k instructions per
/// request, 0.7% of one); the bitmask is a plain store, with the same effect.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline CURLcode gn_easy_restrict_to_http(CURL *handle) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
}
#pragma GCC diagnostic pop
#pragma clang diagnostic pop
static inline CURLcode gn_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode gn_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode gn_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode gn_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}
/// The easy handle and result of a CURLMSG_DONE message (the result lives in a C union).
static inline CURLcode gn_message_result(CURLMsg *message) {
    return message->data.result;
}

#endif
