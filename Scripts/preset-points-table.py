#!/usr/bin/env python3
"""Prints the goal table of Scripts/preset-points.sh: goal × preset × point → seeds passed / seeds.

Reads every <point>.json (the storm simulator's --json goal table) in the directory given (default
.build/preset-points) and prints one markdown row per goal and shipped preset, one column per point.
"""
import json
import pathlib
import sys

directory = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".build/preset-points")
SHIPPED = {"Pipeline.standard": "standard", "Pipeline.interactive": "interactive", "Pipeline.background": "background"}

rows = {}
for path in sorted(directory.glob("*.json")):
    point = path.stem
    try:
        goals = json.loads(path.read_text() or "[]")
    except json.JSONDecodeError:
        print(f"{point}: no JSON (see {point}.log)", file=sys.stderr)
        continue
    for goal in goals:
        preset = SHIPPED.get(goal["strategy"])
        if preset is None:
            continue
        median = goal["median"]
        cell = f'{goal["passed"]}/{goal["seeds"]}' + ("" if goal["holds"] else " ✗")
        if median is not None:
            cell += f" ({median:.3g})"
        rows.setdefault((goal["goal"], preset), {})[point] = cell

print("| point | goal | preset | seeds passed (median) |")
print("|---|---|---|---|")
for (goal, preset), cells in sorted(rows.items()):
    for point, cell in sorted(cells.items()):
        print(f"| {point} | {goal} | {preset} | {cell} |")
