#!/usr/bin/env bash
# Builds the libFuzzer package (Fuzz/) and replays every committed corpus with its target (-runs=0): each
# input is executed once; a crash, a failed precondition, an input running over 1 s or any single allocation
# over 64 MB fails CI. Targets are Fuzz/Corpus/<Target>/. The process's own baseline (Swift runtime,
# Foundation, libFuzzer) is about 40 MB of RSS before the first input, hence the 96 MB RSS bound.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== fuzz corpus replay"
Fuzz/build.sh 2>&1 | grep -E "error|warning:|Compiling|Build complete" | grep -v "^\[" || true
bin=Fuzz/.build/release
status=0
for corpus in Fuzz/Corpus/*/; do
    target=$(basename "$corpus")
    if [ ! -x "$bin/$target" ]; then
        echo "missing fuzz target $target for $corpus"; status=1; continue
    fi
    count=$(find "$corpus" -type f | wc -l)
    if "$bin/$target" "$corpus" -runs=0 -timeout=1 -rss_limit_mb=96 -malloc_limit_mb=64 > "/tmp/fuzz-replay-$target.log" 2>&1; then
        echo "$target: replayed $count inputs"
    else
        echo "$target: FAILED on its corpus"; tail -30 "/tmp/fuzz-replay-$target.log"; status=1
    fi
done
exit $status
