#!/usr/bin/env bash
# Screenshots the job board service's status page in headless Chromium (Debian's `chromium`) and checks the
# PNG: it exists, has the PNG signature and the requested size, and is far larger than a blank page would be.
#
#   Integrations/Examples/JobBoardService/screenshot.sh [OUTPUT.png]   (default: status-page.png beside this script)
#
# Starts `job-board-service --demo` on a free 127.0.0.1 port (its sources on the demo upstreams, a loopback
# FaultServer run as a service of its own), lets it fetch once so the breakers and metrics have something to show,
# takes the screenshot and stops the server with SIGTERM (a graceful shutdown of its service group).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
scratch="${SCRATCH_PATH:-$repo/.build-integrations}"
output="${1:-$here/status-page.png}"
width=1280 height=1400

command -v chromium >/dev/null || { echo "screenshot.sh: chromium is not installed (apt-get install chromium)"; exit 1; }

# SWIFT_BUILD_FLAGS: extra `swift build` flags, the same as the build that shares the scratch path (CI's).
read -r -a build_flags <<<"${SWIFT_BUILD_FLAGS:-}"
build_log=$(mktemp)
swift build "${build_flags[@]}" --package-path "$here" --scratch-path "$scratch" --product job-board-service \
    >"$build_log" 2>&1 || { cat "$build_log"; exit 1; }
rm -f "$build_log"
binary="$(swift build "${build_flags[@]}" --package-path "$here" --scratch-path "$scratch" --show-bin-path)/job-board-service"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
log=$(mktemp)
"$binary" --demo --port "$port" --log-level info >"$log" 2>&1 &
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

# Graceful shutdown: SIGTERM stops the service group in reverse order (the server, then the HTTP client, then the
# demo upstreams) and the process exits 0.
kill -TERM "$server"
for _ in $(seq 1 100); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server" 2>/dev/null; then cat "$log"; echo "screenshot.sh: still running 10 s after SIGTERM"; exit 1; fi
status=0
wait "$server" || status=$?
if [ "$status" != 0 ] || ! grep -q "demo upstreams stopped" "$log"; then
    cat "$log"; echo "screenshot.sh: no clean shutdown after SIGTERM (exit status $status)"; exit 1
fi
echo "graceful shutdown: exit status 0 after SIGTERM"
