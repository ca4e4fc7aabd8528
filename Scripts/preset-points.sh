#!/usr/bin/env bash
# Runs the storm simulator at the points that span the traffic the shipped presets are judged over (issue 23):
# per-client rates 0.02–50 requests/s, outages of 2, 20 and 300 s, stalls of 45 and 120 s, a 5,5 flapping
# server, brownouts of p = 0.1, 0.5 and 0.9, and the Retry-After scenario. Each point's goal table is written as
# JSON to $OUT/<point>.json, and Scripts/preset-points-table.py prints "goal × preset × point → seeds passed".
#
#   Scripts/preset-points.sh                  # every point, 20 seeds each
#   SEEDS=5 Scripts/preset-points.sh outage   # only the points whose name starts with "outage", 5 seeds
#
# Environment: SEEDS (default 20), OUT (default .build/preset-points), JOBS (parallel runs, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-20}
OUT=${OUT:-.build/preset-points}
JOBS=${JOBS:-1}
FILTER=${1:-}
mkdir -p "$OUT"
swift build -c release --product storm-simulator >&2
BIN="$(swift build -c release --show-bin-path)/storm-simulator"

points=()
# Full outages: load, success over the outage and its recovery, and time to recover, at every rate.
for rate in 0.02 0.1 1 4 20 50; do
    for outage in 2 20 300; do
        points+=("outage-r${rate}-t${outage} --scenario outage --rate-per-client ${rate} --outage ${outage}")
    done
done
# Stalls longer than every attempt timeout (the metastable case, server at 280 of 300 requests/s).
for rate in 0.5 4 20; do
    for stall in 45 120; do
        points+=("stall-r${rate}-s${stall} --scenario metastable --rate-per-client ${rate} --stall ${stall} --recovery 60")
    done
done
# A server down 5 s in every 10 s on top of a brownout.
for rate in 0.5 4 20; do
    for p in 0.2 0.5; do
        points+=("flap-r${rate}-p${p} --scenario flap --flap 5,5 --brownout ${p} --rate-per-client ${rate}")
    done
done
# Brownouts.
for rate in 0.1 0.5 4 20 50; do
    for p in 0.1 0.5 0.9; do
        points+=("brownout-r${rate}-p${p} --scenario brownout --brownout ${p} --rate-per-client ${rate}")
    done
done
# 429 with Retry-After.
for rate in 0.5 4; do
    points+=("ratelimit-r${rate} --scenario rate-limit --rate-per-client ${rate}")
done

run_point() {
    local name=$1
    shift
    # Exit status 1 only says a goal failed; the table shows which.
    "$BIN" --seeds "$SEEDS" --json "$@" >"$OUT/$name.json" 2>"$OUT/$name.log" || true
    echo "$name: $(tail -1 "$OUT/$name.log")" >&2
}
export -f run_point
export BIN SEEDS OUT
for point in "${points[@]}"; do
    name=${point%% *}
    [[ -z "$FILTER" || "$name" == "$FILTER"* ]] || continue
    echo "$point"
done | xargs -P "$JOBS" -I{} bash -c 'run_point {}'
python3 Scripts/preset-points-table.py "$OUT"
