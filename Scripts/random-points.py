#!/usr/bin/env python3
"""Runs the storm simulator at points drawn at random from the ranges the shipped presets are judged over
(Docs/Pipeline-Presets.md), not from the sweep's grid: a check at points nobody tuned for.

Each point draws a scenario (outage, brownout, flap, metastable, rate-limit, healthy, quota), a per-client rate
log-uniform in 0.02-50 requests/s, a client count log-uniform in 1-2,000 (total offered load between 1 and
1,000 requests/s), server headroom log-uniform in 1.05-10x, outages of 2-300 s, stalls of 5-120 s, brownouts
of p = 0-0.9 and flapping servers. Every point runs every goal over 20 seeds; the script prints each point's
flags with the simulator's verdict line, and every goal that fails with its seeds passed and median.

    swift build -c release --product storm-simulator
    Scripts/random-points.py --seed 7 --points 40          # the same seed draws the same points
    JOBS=2 Scripts/random-points.py --seed 11 --points 30

Exit status: 0 when every goal held at every point, 1 otherwise.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def draw_points(seed, count):
    rng = random.Random(seed)

    def log_uniform(low, high):
        return math.exp(rng.uniform(math.log(low), math.log(high)))

    points = []
    for _ in range(count):
        scenario = rng.choice(["outage", "outage", "brownout", "flap", "metastable", "rate-limit", "healthy", "quota"])
        rate = round(log_uniform(0.02, 50), 3)
        clients = round(log_uniform(1, 2000))
        offered = round(min(max(rate * clients, 1.0), 1000.0), 2)
        capacity = str(round(offered * round(log_uniform(1.05, 10), 2), 2))
        flags = ["--scenario", scenario, "--rate-per-client", str(rate), "--offered", str(offered)]
        if scenario == "outage":
            flags += ["--capacity", capacity, "--outage", str(round(log_uniform(2, 300))), "--recovery", "60"]
        elif scenario == "brownout":
            flags += ["--capacity", capacity, "--brownout", str(round(rng.uniform(0, 0.9), 2))]
        elif scenario == "flap":
            up, down = rng.choice([2, 3, 5, 8, 15]), rng.choice([1, 2, 5, 10, 20])
            flags += ["--capacity", capacity, "--flap", f"{up},{down}", "--brownout", str(round(rng.uniform(0, 0.7), 2))]
        elif scenario == "metastable":
            flags += ["--stall", str(round(log_uniform(5, 120))), "--recovery", "60"]
        else:
            flags += ["--capacity", capacity]
        points.append(flags)
    return points


def run_point(binary, seeds, flags):
    result = subprocess.run([binary, "--seeds", str(seeds), "--json"] + flags, capture_output=True, text=True)
    verdict = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    try:
        return flags, json.loads(result.stdout), verdict
    except json.JSONDecodeError:
        return flags, None, verdict


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7, help="draws the points (default 7)")
    parser.add_argument("--points", type=int, default=40, help="how many points (default 40)")
    parser.add_argument("--seeds", type=int, default=20, help="simulator seeds per point (default 20)")
    parser.add_argument("--binary", default=".build/release/storm-simulator")
    arguments = parser.parse_args()
    failures = 0
    jobs = int(os.environ.get("JOBS", "1"))
    with ThreadPoolExecutor(jobs) as pool:
        runs = pool.map(lambda flags: run_point(arguments.binary, arguments.seeds, flags),
                        draw_points(arguments.seed, arguments.points))
        for flags, goals, verdict in runs:
            print(" ".join(flags), "::", verdict, flush=True)
            if goals is None:
                failures += 1
                print("   the simulator printed no goal table", flush=True)
                continue
            for goal in goals:
                if not goal["holds"]:
                    failures += 1
                    print(f"   FAIL {goal['strategy']}: {goal['goal']} (target {goal.get('target')}): "
                          f"{goal['passed']}/{goal['seeds']} seeds, median {goal['median']}", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
