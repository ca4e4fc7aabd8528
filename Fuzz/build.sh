#!/usr/bin/env bash
# Builds every libFuzzer target of this package (release, SwiftPM's `--sanitize=fuzzer`, which passes
# `-sanitize=fuzzer` to swiftc and lets libFuzzer provide `main`) into Fuzz/.build/release/.
# Usage: Fuzz/build.sh [extra swift build arguments]
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release --sanitize=fuzzer "$@"
