#!/usr/bin/env python3
"""Brownout success under the retry budget's rule alone, for one scope: what the budget allows, without a pipeline.

Models `RetryBudgetConfiguration.interactive` (funded by failed first attempts, 10 % ratio, 10 s window in 1 s
slices, a floor of one retry earned back at 0.1 per request, refused retries asking again at their draw, at the
unjittered 250 ms and at the 2 s evidence wait while the scope has other traffic) and the interactive policy
(2 attempts, equal jitter on 250 ms). Requests arrive as a Poisson process; each attempt fails with probability
p and is answered 110 ms after it starts. Prints the median and mean success over the runs.

    Scripts/budget-rule-monte-carlo.py P [RATE] [SECONDS] [RUNS]      # defaults: 0.5 requests/s, 200 s, 200 runs
"""
import heapq
import math
import random
import sys

RATIO, WINDOW, FLOOR, ANSWER, BACKOFF, EVIDENCE_WAIT = 0.1, 10, 1.0, 0.11, 0.25, 2.0
REQUESTS, FAILURES, RETRIES, STARTS_WHILE_HELD = range(4)


def run(seed, p, rate, seconds):
    rng = random.Random(seed)
    slices = {}

    def total(now, kind):
        return sum(slices.get(i, (0, 0, 0, 0))[kind] for i in range(int(now) - WINDOW + 1, int(now) + 1))

    def count(now, kind):
        slices.setdefault(int(now), [0, 0, 0, 0])[kind] += 1

    floor_base, floor_earned = FLOOR, 0
    held = []
    events, order = [], 0
    now = 0.0
    while True:
        now += rng.expovariate(rate)
        if now >= seconds:
            break
        order += 1
        heapq.heappush(events, (now, order, "start", None))
    succeeded = requests = 0
    latest_success_start = None

    def withdraw(now):
        nonlocal floor_base, floor_earned
        if RATIO * total(now, REQUESTS) < 1:
            credit = min(floor_base + RATIO * floor_earned, FLOOR)
            if math.floor(credit) >= 1:
                floor_base, floor_earned = credit - 1, 0
                return True
            return False
        return total(now, RETRIES) < math.floor(RATIO * total(now, FAILURES))

    while events:
        now, _, kind, data = heapq.heappop(events)
        order += 1
        if kind == "start":
            requests += 1
            count(now, REQUESTS)
            floor_earned += 1
            if min(floor_base + RATIO * floor_earned, FLOOR) >= FLOOR:
                floor_base, floor_earned = FLOOR, 0
            if any(start <= now < end for start, end in held):
                count(now, STARTS_WHILE_HELD)
            heapq.heappush(events, (now + ANSWER, order, "answer", (now, rng.random() < p)))
        elif kind == "answer":
            start, failed = data
            if not failed:
                succeeded += 1
                latest_success_start = max(latest_success_start or start, start)
                continue
            count(now, FAILURES)
            draw = rng.uniform(BACKOFF / 2, BACKOFF)
            if withdraw(now):
                count(now, RETRIES)
                heapq.heappush(events, (now + draw + ANSWER, order, "retry", None))
                continue
            held.append((now, now + EVIDENCE_WAIT))
            checkpoints = [now + draw, now + BACKOFF, now + EVIDENCE_WAIT]
            heapq.heappush(events, (checkpoints[0], order, "ask", (now, checkpoints, 0)))
        elif kind == "ask":
            failure, checkpoints, index = data
            granted = withdraw(now)
            if not granted and latest_success_start is not None and latest_success_start > failure:
                granted = total(now, RETRIES) < math.floor(RATIO * total(now, REQUESTS))
            if granted:
                count(now, RETRIES)
                heapq.heappush(events, (now + ANSWER, order, "retry", None))
            elif index + 1 < len(checkpoints) and total(now, STARTS_WHILE_HELD) > 0:
                heapq.heappush(events, (checkpoints[index + 1], order, "ask", (failure, checkpoints, index + 1)))
                continue
            held.remove((failure, failure + EVIDENCE_WAIT))
        elif kind == "retry":
            succeeded += rng.random() >= p
    return succeeded / max(requests, 1)


def main():
    p = float(sys.argv[1])
    rate = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 200
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    results = sorted(run(seed, p, rate, seconds) for seed in range(runs))
    print(f"p = {p}: median {results[len(results) // 2]:.2%}, mean {sum(results) / len(results):.2%}")


if __name__ == "__main__":
    main()
