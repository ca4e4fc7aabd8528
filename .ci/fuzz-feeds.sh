#!/usr/bin/env bash
# CI: replay the committed feed-parser and date-parser fuzz corpora (no new fuzzing). Every input must run
# without a crash, within 1 s, and without any single allocation over 64 MB (the process's own baseline,
# Swift runtime + Foundation + libFuzzer, is about 40 MB of RSS before the first input, so the RSS bound is
# 96 MB). Builds the separate Fuzz package in release with libFuzzer instrumentation.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --package-path Fuzz -c release --sanitize=fuzzer --product FeedParserFuzzer
swift build --package-path Fuzz -c release --sanitize=fuzzer --product FeedDateFuzzer
bin=$(swift build --package-path Fuzz -c release --sanitize=fuzzer --show-bin-path)
for target in FeedParserFuzzer FeedDateFuzzer; do
    echo "== replaying Fuzz/Corpus/$target ($(ls "Fuzz/Corpus/$target" | wc -l) inputs)"
    "$bin/$target" -runs=0 -timeout=1 -rss_limit_mb=96 -malloc_limit_mb=64 "Fuzz/Corpus/$target"
done
