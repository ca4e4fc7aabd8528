#!/usr/bin/env bash
# Builds every libFuzzer target of this package (release, `-sanitize=fuzzer`) into Fuzz/.build/release/.
# Usage: Fuzz/build.sh [extra swift build arguments]
set -euo pipefail
cd "$(dirname "$0")"
swift build -c release -Xswiftc -sanitize=fuzzer "$@"
