#!/usr/bin/env bash
# CI: the PostgreSQL coordination store against a real, throwaway PostgreSQL cluster on loopback.
# Installs PostgreSQL from Debian if missing, starts a cluster in a temporary directory (127.0.0.1 on a free
# port, unix socket in the same directory, as the postgres user when run as root), runs the integration
# tests with the connection in RESILIENCE_PG_* variables, and stops the cluster on exit.
# Usage: .ci/postgres.sh [command …]   (default: the package's tests; the command runs with the env set)
# PG_FSYNC=on starts the cluster with fsync on (the production setting, for measurements); the default is off.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bin_dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin_dir" ] || [ ! -x "$bin_dir/initdb" ]; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
        bin_dir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    else
        echo "PostgreSQL is not installed and cannot be installed here (need root and apt-get)"; exit 1
    fi
fi

run_as=()
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    run_as=(runuser -u postgres --)
fi

work=$(mktemp -d /tmp/resilience-pg.XXXXXX)
chmod 755 "$work"
[ "${#run_as[@]}" -gt 0 ] && chown postgres "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

stop() {
    "${run_as[@]}" "$bin_dir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap stop EXIT

"${run_as[@]}" "$bin_dir/initdb" -D "$work/data" -U postgres -A trust --no-sync >/dev/null
# In the configuration file, not on the command line, so that ALTER SYSTEM can change it for a measurement.
echo "fsync = ${PG_FSYNC:-off}" >>"$work/data/postgresql.conf"
"${run_as[@]}" "$bin_dir/pg_ctl" -D "$work/data" -l "$work/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $work" start >/dev/null

export RESILIENCE_PG_HOST=127.0.0.1 RESILIENCE_PG_PORT=$port RESILIENCE_PG_USER=postgres RESILIENCE_PG_DATABASE=postgres
export RESILIENCE_PG_DATA="$work/data" RESILIENCE_PG_CTL="$bin_dir/pg_ctl" RESILIENCE_PG_SOCKET_DIR="$work"
echo "== PostgreSQL $("$bin_dir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $work/data, fsync=${PG_FSYNC:-off})"

if [ "$#" -gt 0 ]; then
    "$@"
else
    read -r -a build_flags <<<"${SWIFT_BUILD_FLAGS:-}"  # the integrations' flags (.ci/integrations.sh), if any
    swift test "${build_flags[@]}" --package-path Integrations/PostgreSQL --scratch-path "$root/.build-integrations" \
        --no-parallel
fi
