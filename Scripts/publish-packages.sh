#!/usr/bin/env bash
# Turns this repository into the repositories a user adds by URL: one git repository per package at
# OUTPUT_DIR/<package name> (ResilienceKit for the library at the root; ResilienceAsyncHTTPClient,
# ResiliencePostgreSQL, ... for each integration under Integrations/), each tagged VERSION. Each integration's
# manifest depends on the library at BASE_URL/ResilienceKit (default file://OUTPUT_DIR) from VERSION instead of
# the in-repo `.package(name: "ResilienceKit", path: "../..")` line, which stays as it is for development.
#
#   Scripts/publish-packages.sh OUTPUT_DIR VERSION [BASE_URL]
#   Scripts/publish-packages.sh /tmp/published 1.0.0                         # file:///tmp/published/ResilienceKit
#   Scripts/publish-packages.sh out 1.0.0 https://github.com/example-org     # for pushing to a hosting service
#
# The files published are the working tree's files that git tracks or would track (ignored files, such as
# .build and Package.resolved, stay out; committed Package.resolved files go along). Examples under
# Integrations/Examples/ are not published: they are applications, not packages a user depends on.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 OUTPUT_DIR VERSION [BASE_URL]" >&2
    exit 64
fi
version=$2
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    echo "VERSION must be a semantic version such as 1.2.3, not '$version'" >&2
    exit 64
fi
mkdir -p "$1"
output=$(cd "$1" && pwd)
base_url=${3:-file://$output}
base_url=${base_url%/}
root=$(cd "$(dirname "$0")/.." && pwd)
library_line='.package(name: "ResilienceKit", path: "../..")'

# Copies the files of the package at $root/$1 (the root when empty) into a fresh $output/$2, leaving out
# nested packages, makes it a git repository with one commit and tags it $version.
publish() {
    local source=$1 name=$2 destination="$output/$2"
    rm -rf "$destination"
    mkdir -p "$destination"
    (
        cd "$root/$source"
        # Tracked and untracked-but-not-ignored files of this package, without other packages nested in it.
        git ls-files -z --cached --others --exclude-standard -- . \
            | if [ -z "$source" ]; then grep -z -v -E '^(Integrations|Benchmarks|Fuzz)/'; else cat; fi \
            | while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done \
            | tar --null -T - -cf - | tar -xf - -C "$destination"
    )
    git -C "$destination" init -q -b main
    git -C "$destination" add -A
    git -C "$destination" -c user.name="ResilienceKit publisher" -c user.email="publisher@localhost" \
        commit -q -m "ResilienceKit $version: $name"
    git -C "$destination" tag "$version"
    echo "published $name $version at $destination"
}

# The manifest's package name: the first `name: "..."` argument of `Package(`.
package_name() {
    sed -n 's/^[[:space:]]*name: "\([^"]*\)",$/\1/p' "$1/Package.swift" | head -1
}

publish "" ResilienceKit
for directory in "$root"/Integrations/*/; do
    directory=${directory%/}
    [ -f "$directory/Package.swift" ] || continue   # Integrations/Examples holds applications, not packages
    name=$(package_name "$directory")
    [ -n "$name" ] || { echo "no package name in $directory/Package.swift" >&2; exit 1; }
    grep -qF "$library_line" "$directory/Package.swift" || {
        echo "$directory/Package.swift does not depend on the library with $library_line" >&2
        exit 1
    }
    publish "Integrations/$(basename "$directory")" "$name"
    manifest="$output/$name/Package.swift"
    replacement=".package(url: \"$base_url/ResilienceKit\", from: \"$version\")"
    python3 - "$manifest" "$library_line" "$replacement" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
open(path, "w").write(text.replace(old, new))
PY
    git -C "$output/$name" -c user.name="ResilienceKit publisher" -c user.email="publisher@localhost" \
        commit -q -am "Depend on the published ResilienceKit $version"
    git -C "$output/$name" tag -f "$version" >/dev/null
done
