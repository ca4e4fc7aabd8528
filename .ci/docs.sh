#!/usr/bin/env bash
# The reference documentation: DocC over the products users read, ResilienceKit (which re-exports every module
# but ResilienceSync and ResilienceTesting), ResilienceSync and ResilienceTesting. Their symbol graphs come from a
# build in a scratch path of its own, so the normal debug build is not invalidated. Any DocC warning (a link to a
# symbol that does not exist or is not public, an ambiguous link) fails the run. DOCS_OUTPUT=DIR keeps the
# rendered archives there (ResilienceKit.doccarchive, …); otherwise they are deleted.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== DocC: reference documentation"
if command -v docc >/dev/null; then docc=(docc); else docc=(xcrun docc); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift build --scratch-path .build-docs \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$work/graphs" > "$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log"; echo "the build for the symbol graphs failed"; exit 1; }
output=${DOCS_OUTPUT:-$work/archives}
mkdir -p "$output"
failed=0
for module in ResilienceKit ResilienceSync ResilienceTesting; do
    mkdir "$work/$module"
    cp "$work/graphs/$module.symbols.json" "$work/$module/"
    cp "$work/graphs/$module"@*.symbols.json "$work/$module/" 2>/dev/null || true
    "${docc[@]}" convert --analyze --additional-symbol-graph-dir "$work/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.resiliencekit.$module" \
        --output-path "$output/$module.doccarchive" > "$work/$module.log" 2>&1 \
        || { cat "$work/$module.log"; echo "DocC failed on $module"; exit 1; }
    if grep -q "warning:" "$work/$module.log"; then
        grep -A3 "warning:" "$work/$module.log"
        failed=1
    else
        symbols=$(grep -o '"precise"' "$work/$module/$module.symbols.json" | wc -l)
        echo "$module: $symbols symbols, no DocC warning"
    fi
done
[ "$failed" -eq 0 ] || { echo "DocC reported broken links (above)"; exit 1; }
