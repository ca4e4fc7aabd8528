#!/usr/bin/env bash
# The concurrency stress tests under ThreadSanitizer, in a scratch path of their own so the normal debug
# build is not invalidated. Any data race reported fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== ThreadSanitizer: concurrency stress tests"
suites="StressTests|ConcurrencyLimiterTests|LockedStateTests|AuthenticatingTransportTests|failedRefreshIsSingleFlight"
log=$(mktemp)
# Line tables only: enough for ThreadSanitizer's stack traces (file and line), less debug information to emit and
# link. The index store stays on: swift test discovers the XCTest cases through it on Linux.
TSAN_OPTIONS="halt_on_error=1" swift test --scratch-path .build-tsan --sanitize=thread --no-parallel \
    -Xswiftc -gline-tables-only --filter "$suites" > "$log" 2>&1 || true
if grep -q "ThreadSanitizer" "$log"; then grep -A30 "ThreadSanitizer" "$log" | head -60; echo "ThreadSanitizer reported a race"; exit 1; fi
grep -q "Test run with .* passed" "$log" || { echo "stress tests failed under ThreadSanitizer"; tail -40 "$log"; exit 1; }
echo "under ThreadSanitizer, no race: $(grep -E "Test run with .* passed" "$log" | sed 's/^.*Test run/Test run/')"
