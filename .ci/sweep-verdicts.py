#!/usr/bin/env python3
"""Judges a sweep's verdicts (storm-simulator --sweep's results.json) against Docs/Simulation/known-failures.json.

Fails (exit 1) on a failing verdict the file does not list, on a listed verdict of the run's mode that now holds
(the list must then lose it), and on a listed verdict whose `within` goal (the same strategy at the same point)
does not hold. Usage:
    python3 .ci/sweep-verdicts.py RESULTS_JSON
"""
import json
import sys
from pathlib import Path

KNOWN = Path(__file__).resolve().parent.parent / "Docs" / "Simulation" / "known-failures.json"


def main():
    results = json.loads(Path(sys.argv[1]).read_text())
    mode = results["mode"]
    known = {
        (entry["strategy"], entry["goal"], entry["point"]): entry
        for entry in json.loads(KNOWN.read_text())["verdicts"]
        if mode in entry["modes"]
    }
    problems = []
    seen = set()
    for verdict in results["verdicts"]:
        key = (verdict["strategy"], verdict["goal"], verdict["point"])
        entry = known.get(key)
        if entry is None:
            if not verdict["holds"]:
                problems.append(f"fails and is not a known failure: {verdict['strategy']}: {verdict['goal']} at "
                                f"`{verdict['point']}` (median {verdict['median']}, target {verdict['target']})")
            continue
        seen.add(key)
        if verdict["holds"]:
            problems.append(f"holds now; remove it from {KNOWN.name}: {verdict['strategy']}: {verdict['goal']} at "
                            f"`{verdict['point']}`")
            continue
        if "within" in entry:
            bounds = [
                other for other in results["verdicts"]
                if other["strategy"] == verdict["strategy"] and other["point"] == verdict["point"]
                and other["goal"].startswith(entry["within"])
            ]
            if not bounds or not all(bound["holds"] for bound in bounds):
                problems.append(f"not within \"{entry['within']}\": {verdict['strategy']}: {verdict['goal']} at "
                                f"`{verdict['point']}` (median {verdict['median']})")
    for key in known.keys() - seen:
        problems.append(f"listed in {KNOWN.name} for the {mode} sweep, not in it: {key[0]}: {key[1]} at `{key[2]}`")
    failing = sum(1 for verdict in results["verdicts"] if not verdict["holds"])
    if problems:
        print("\n".join(problems))
        print(f"{mode} sweep: {len(problems)} verdict(s) differ from {KNOWN.name} (above)")
        sys.exit(1)
    print(f"{mode} sweep: {len(results['verdicts'])} verdicts, {failing} failing, each a known failure within its "
          f"bound ({KNOWN.name})")


if __name__ == "__main__":
    main()
