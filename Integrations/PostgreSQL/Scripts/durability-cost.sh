#!/usr/bin/env bash
# What durability costs the store's statements. pgbench runs the store's rate decision (the `leaseTokens`
# statement) and its breaker compare-and-set (`updateBreaker`, which also fires the change notification), one
# client, against the cluster .ci/postgres.sh started, in ROUNDS interleaved rounds (so a busy machine's load
# falls on every variant alike), each round every variant for SECONDS_PER_RUN seconds:
#   fsync on and off (switched by ALTER SYSTEM + reload; synchronous_commit on), and for the rate decision a
#   LOGGED table, the same with synchronous_commit off for the session, and an UNLOGGED copy of the table.
# Prints each variant's per-statement latency p50 / p90 / p99 over every round (pgbench's transaction log).
#
#   bash .ci/postgres.sh bash Integrations/PostgreSQL/Scripts/durability-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin_dir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
seconds=${SECONDS_PER_RUN:-4}
rounds=${ROUNDS:-5}
connect=(-h "$RESILIENCE_PG_HOST" -p "$RESILIENCE_PG_PORT" -U "$RESILIENCE_PG_USER" "$RESILIENCE_PG_DATABASE")
psql() { "$bin_dir/psql" -X -q -v ON_ERROR_STOP=1 "${connect[@]}" "$@"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for file in Schema/0*.sql; do psql -f "$file" 2>/dev/null; done
psql -c "CREATE UNLOGGED TABLE IF NOT EXISTS bench_rate_unlogged (LIKE resilience_coordination_rate INCLUDING ALL)"

# The store's statement for a quota of 1,000,000/s, burst 1000, one slot, no horizon (interval 1 µs).
lease() {
    cat <<SQL
\set k random(1, 100)
WITH c AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us)
INSERT INTO $1 AS r (key, tat_us, decided_us, granted, first_offset_us, retry_us)
SELECT 'bench-' || :k, c.now_us + LEAST(1, 999 / 1 + 1) * 1, c.now_us, LEAST(1, 999 / 1 + 1), -999, 0 FROM c
ON CONFLICT (key) DO UPDATE SET
    tat_us = GREATEST(r.tat_us, EXCLUDED.decided_us)
        + (CASE WHEN (EXCLUDED.decided_us + 999 - GREATEST(r.tat_us, EXCLUDED.decided_us)) < 0 THEN 0
           ELSE LEAST(1, (EXCLUDED.decided_us + 999 - GREATEST(r.tat_us, EXCLUDED.decided_us)) / 1 + 1) END) * 1,
    decided_us = EXCLUDED.decided_us,
    granted = 1,
    first_offset_us = GREATEST(r.tat_us, EXCLUDED.decided_us) - 999 - EXCLUDED.decided_us,
    retry_us = 0
RETURNING granted, first_offset_us, retry_us;
SQL
}
lease resilience_coordination_rate >"$scratch/logged.sql"
lease bench_rate_unlogged >"$scratch/unlogged.sql"
# A compare-and-set that always applies (expected version = the stored one).
cat >"$scratch/breaker.sql" <<'SQL'
\set k random(1, 100)
WITH c AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us)
INSERT INTO resilience_coordination_breaker AS b
    (key, state, version, written_us, open_until_us, trips, expires_us, probe_holder, probe_until_us)
SELECT 'bench-' || :k, 'closed', nextval('resilience_coordination_version'), c.now_us, c.now_us, 0,
       c.now_us + 60000000, NULL, 0 FROM c
ON CONFLICT (key) DO UPDATE SET
    state = EXCLUDED.state, version = EXCLUDED.version, written_us = EXCLUDED.written_us,
    open_until_us = EXCLUDED.open_until_us, trips = EXCLUDED.trips, expires_us = EXCLUDED.expires_us,
    probe_holder = NULL, probe_until_us = 0
WHERE b.version = (SELECT version FROM resilience_coordination_breaker WHERE key = 'bench-' || :k)
RETURNING version;
SQL

# run NAME SCRIPT [PGOPTIONS]: one pgbench run, its transaction log appended to $scratch/NAME.log.
run() {
    (cd "$scratch" && PGOPTIONS=${3:-} "$bin_dir/pgbench" -n -c 1 -j 1 -T "$seconds" -l --log-prefix="run" \
        -f "$2" "${connect[@]}" >/dev/null 2>&1)
    cat "$scratch"/run.* >>"$scratch/$1.log"
    rm -f "$scratch"/run.*
}

for round in $(seq "$rounds"); do
    for fsync in on off; do
        psql -c "ALTER SYSTEM SET fsync = $fsync" -c "SELECT pg_reload_conf()" >/dev/null
        sleep 0.5
        [ "$(psql -t -A -c "SHOW fsync")" = "$fsync" ] || { echo "fsync did not change to $fsync"; exit 1; }
        run "fsync=$fsync, rate decision, LOGGED" "$scratch/logged.sql"
        run "fsync=$fsync, rate decision, LOGGED, synchronous_commit=off" "$scratch/logged.sql" \
            "-c synchronous_commit=off"
        run "fsync=$fsync, rate decision, UNLOGGED" "$scratch/unlogged.sql"
        run "fsync=$fsync, breaker compare-and-set (+ NOTIFY)" "$scratch/breaker.sql"
    done
done
psql -c "ALTER SYSTEM RESET fsync" -c "SELECT pg_reload_conf()" >/dev/null

echo "$rounds rounds × ${seconds} s per variant, one client; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$scratch" <<'PY'
import glob, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.log"))):
    latencies = sorted(int(line.split()[2]) for line in open(path) if line.strip())
    pick = lambda q: latencies[min(len(latencies) - 1, int(len(latencies) * q))] / 1000
    name = os.path.basename(path)[:-4]
    print(f"{name:<62} p50 {pick(0.5):6.2f} ms  p90 {pick(0.9):6.2f} ms  p99 {pick(0.99):6.2f} ms  (n = {len(latencies)})")
PY
