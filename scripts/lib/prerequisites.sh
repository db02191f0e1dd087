# Shared by scripts/test and scripts/demo: make sure this machine has what the project needs.
# Debian packages that are missing are installed with apt-get; anything that cannot be installed
# that way (the Swift toolchain) is a clear failure, never a silent skip.

# What the library needs at run time on Linux (the demo needs only this):
#   libcurl4: FoundationNetworking (URLSession on Linux) is built on it.
#   libcurl4-openssl-dev, pkg-config: the CCurl system-library target that CurlTransport
#   (the default transport on Linux) is built on.
GENTLE_RUNTIME_PACKAGES=(libcurl4 libcurl4-openssl-dev pkg-config)
# What the test suite needs on top:
#   nginx-light: the integration tests serve real ETags, TLS and HTTP/2 from nginx.
#   openssl: the TLS tests generate their certificates.
#   gzip, brotli, zstd: the decoding tests compress response bodies with the real tools.
#   curl: the hostile-server tests use the curl CLI as a real client; gentle-bench measures it.
#   python3: the decoding and hostile-server tests make and inflate zlib streams with it.
#   python3-yaml: scripts/check-workflows parses the CI workflows and .spi.yml with PyYAML.
GENTLE_TEST_PACKAGES=(nginx-light openssl gzip brotli zstd curl python3 python3-yaml)

gentle_log() { printf '==> %s\n' "$*" >&2; }
gentle_fail() { printf 'error: %s\n' "$*" >&2; exit 1; }

gentle_require_swift() {
    command -v swift >/dev/null 2>&1 \
        || gentle_fail "the Swift toolchain (6.0 or later) is not on PATH; install it from swift.org first"
    local version
    version="$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)"
    [ -n "$version" ] && [ "$version" -ge 6 ] \
        || gentle_fail "Swift 6.0 or later is required; found: $(swift --version 2>&1 | head -n 1)"
}

gentle_install_debian_packages() {
    [ "$(uname -s)" = "Linux" ] || return 0
    command -v dpkg-query >/dev/null 2>&1 || { gentle_log "not a Debian system; skipping package checks"; return 0; }
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    gentle_log "installing missing Debian packages: ${missing[*]}"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || gentle_fail "need root (or sudo) to install: ${missing[*]}"
        sudo="sudo"
    fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
        || gentle_fail "apt-get update failed"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        || gentle_fail "apt-get install failed for: ${missing[*]}"
}

# gentle_prerequisites [PACKAGE...]: Swift, plus the runtime packages and any named ones.
gentle_prerequisites() {
    gentle_require_swift
    gentle_install_debian_packages "${GENTLE_RUNTIME_PACKAGES[@]}" "$@"
}
