#!/usr/bin/env bash
# Screenshots the job board service's status page in headless Chromium (Debian's `chromium`) and checks the
# PNG: it exists, has the PNG signature and the requested size, and is far larger than a blank page would be.
#
#   Integrations/Examples/JobBoardService/screenshot.sh [OUTPUT.png]   (default: status-page.png beside this script)
#
# Starts `job-board-service` on a free 127.0.0.1 port (its sources on the embedded loopback FaultServer), lets
# it fetch twice so the breakers and metrics have something to show, takes the screenshot and stops the server.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
scratch="${SCRATCH_PATH:-$repo/.build-integrations}"
output="${1:-$here/status-page.png}"
width=1280 height=1400

command -v chromium >/dev/null || { echo "screenshot.sh: chromium is not installed (apt-get install chromium)"; exit 1; }

build_log=$(mktemp)
swift build --package-path "$here" --scratch-path "$scratch" --product job-board-service >"$build_log" 2>&1 \
    || { cat "$build_log"; exit 1; }
rm -f "$build_log"
binary="$(swift build --package-path "$here" --scratch-path "$scratch" --show-bin-path)/job-board-service"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
log=$(mktemp)
"$binary" --port "$port" >"$log" 2>&1 &
server=$!
profile=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$profile" "$log"' EXIT

for _ in $(seq 1 150); do
    curl -fs "http://127.0.0.1:$port/health" >/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$log"; echo "screenshot.sh: the server exited"; exit 1; }
    sleep 0.2
done
curl -fs "http://127.0.0.1:$port/jobs" >/dev/null   # a first fetch: workable-soylent answers, then rate-limits

rm -f "$output"
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --window-size="$width,$height" --screenshot="$output" "http://127.0.0.1:$port/" >/dev/null 2>&1

python3 - "$output" "$width" "$height" <<'PY'
import struct, sys
path, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (width, height), f"size {w}x{h}, expected {width}x{height}"
# A blank page of this size compresses to a few kilobytes; text, tables and colours make it far larger.
assert len(data) > 40_000, f"only {len(data)} bytes: the page looks empty"
print(f"screenshot: {path} ({w}x{h}, {len(data)} bytes)")
PY
