#!/usr/bin/env bash
# CI: builds and tests the integration packages under Integrations/, each its own package depending on the
# library by path. One shared scratch path, so the ecosystem packages they share (swift-nio, swift-log …)
# compile once. Each package has its own block below.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-integrations

# Builds `Integrations/$1` with its tests (failing on any warning from our code), then runs the tests.
build_and_test_integration() {
    local package="Integrations/$1" log
    local started=$SECONDS
    echo "== integration $1"
    log=$(mktemp)
    swift build --build-tests --package-path "$package" --scratch-path "$scratch" 2>&1 | tee "$log" \
        | grep -E "error:|Build complete" || true
    # Warnings in our own files only (the ecosystem packages' own warnings are theirs).
    if grep -E "^$PWD/(Sources|Integrations)/.*warning:" "$log" | grep -q .; then
        echo "$1 built with warnings:"; grep -E "^$PWD/(Sources|Integrations)/.*warning:" "$log" | sort -u; exit 1
    fi
    grep -q "Build complete" "$log" || { tail -40 "$log"; exit 1; }
    swift test --skip-build --no-parallel --package-path "$package" --scratch-path "$scratch"
    swift format lint --strict --recursive --parallel "$package/Package.swift" "$package/Sources" "$package/Tests"
    echo "integration $1 took $((SECONDS - started)) s"
}

# --- issue14-observability: swift-log, swift-metrics, swift-distributed-tracing, swift-service-lifecycle,
# the Hummingbird example ---
build_and_test_integration Logging
build_and_test_integration Metrics
build_and_test_integration Tracing
build_and_test_integration ServiceLifecycle

# --- issue14-transport: the AsyncHTTPClient transport and the OpenAPI middleware ---
build_and_test_integration AsyncHTTPClientTransport
build_and_test_integration OpenAPI
