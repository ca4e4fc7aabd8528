#!/usr/bin/env bash
# The reference documentation: DocC over the products users read, ResilienceKit (which re-exports every module
# but ResilienceSync and ResilienceTesting), ResilienceSync and ResilienceTesting. Their symbol graphs are extracted
# from the modules of the normal debug build (swift-symbolgraph-extract), so no second build compiles the library
# again. Any DocC warning (a link to a symbol that does not exist or is not public, an ambiguous link) fails the
# run. DOCS_OUTPUT=DIR keeps the rendered archives there (ResilienceKit.doccarchive, …); otherwise they are deleted.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== DocC: reference documentation"
if command -v docc >/dev/null; then docc=(docc); else docc=(xcrun docc); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The normal debug build (nothing to do when it is up to date), then each module's public symbols with those it
# re-exports (`@_exported import`), as the compiler's own -emit-symbol-graph writes them.
swift build > "$work/build.log" 2>&1 || { tail -40 "$work/build.log"; echo "the debug build failed"; exit 1; }
bin_path=$(swift build --show-bin-path)  # .build/<triple>/debug
triple=$(basename "$(dirname "$(readlink -f "$bin_path")")")
ours=$(cd Sources && ls -d Resilience* | paste -sd, -)
if command -v swift-symbolgraph-extract >/dev/null; then extract=(swift-symbolgraph-extract); else
    extract=(xcrun swift-symbolgraph-extract)
fi
mkdir "$work/graphs"
for module in ResilienceKit ResilienceSync ResilienceTesting; do
    "${extract[@]}" -module-name "$module" -target "$triple" -I "$bin_path/Modules" \
        -Xcc -fmodule-map-file="$PWD/Sources/CSQLite/module.modulemap" -minimum-access-level public \
        -experimental-allowed-reexported-modules="$ours" -output-dir "$work/graphs" \
        || { echo "extracting $module's symbol graph failed"; exit 1; }
done
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
