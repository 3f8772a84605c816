#!/usr/bin/env bash
# The herd simulator's contention model against a real PostgreSQL: an
# experiment, not part of CI.
#
#   bash scripts/pg-contention.sh                        # the default client counts
#   bash scripts/pg-contention.sh --out docs/img         # and write the chart
#   bash scripts/pg-contention.sh --clients 10,20 --runs 2
#
# Arguments are passed to `cargo run --release -p backoff-simulator --example pg_contention`.
# The script creates a throw-away cluster in a temporary directory with
# initdb, starts it with pg_ctl on a free loopback port (trust
# authentication on 127.0.0.1 only), runs the example with
# PG_CONTENTION_URL pointing at it, and stops and deletes the cluster on
# exit, however the example ends. PostgreSQL refuses to run as root: as
# root, the cluster belongs to the `postgres` user and its commands run
# through runuser. The server's binaries are found with pg_config, or
# under /usr/lib/postgresql/<version>/bin (Debian's layout), or in PG_BIN.
#
# The cluster is tuned for a throw-away run, not for durability: fsync,
# synchronous_commit and full_page_writes are off, so a commit does not
# wait for the disk and a transaction's time is its round trips.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${PG_BIN:-}
if [ -z "$bin" ] && command -v pg_config >/dev/null; then
    bin=$(pg_config --bindir)
fi
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
fi
[ -n "$bin" ] && [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] || {
    echo "PostgreSQL's initdb and pg_ctl were not found (install postgresql, or set PG_BIN)" >&2
    exit 2
}

# Run a server command as the cluster's owner.
if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "as root, the cluster needs a 'postgres' user" >&2; exit 2; }
    as_owner() { runuser -u postgres -- "$@"; }
else
    as_owner() { "$@"; }
fi

# A free port on the loopback interface: the first in 54320..54999 that
# nothing listens on.
port=
for candidate in $(seq 54320 54999); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
        port=$candidate
        break
    fi
done
[ -n "$port" ] || { echo "no free port in 54320..54999" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/pg-contention.XXXXXX")
cleanup() {
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" = 0 ] && chown postgres: "$dir"

echo "==> a throw-away cluster in $dir on 127.0.0.1:$port ($bin)" >&2
as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
}
server_options="-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir"
server_options+=" -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
as_owner "$bin/pg_ctl" -D "$dir/data" -o "$server_options" -l "$dir/server.log" -w start >/dev/null || {
    cat "$dir/server.log" >&2
    exit 1
}

echo "==> cargo run --release -p backoff-simulator --example pg_contention -- $*" >&2
PG_CONTENTION_URL="postgres://postgres@127.0.0.1:$port/postgres" \
    cargo run --release -p backoff-simulator --example pg_contention -- "$@"
