#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the durable-run tests, from the
# project's own files: the server binaries of the system's packages (found
# on PATH, under /usr/lib/postgresql/*/bin or /usr/local/bin; installed
# with apt-get when missing and this runs as root on Debian), a cluster made
# by initdb under target/pg, or /tmp as root (scripts/postgres/dir.sh; trust authentication, listening on 127.0.0.1
# and a unix socket in that folder only), started with pg_ctl. PostgreSQL
# refuses to run as root: as root, the server runs as the system user
# `typed-tools-pg`, made if missing.
#
# Prints the line to evaluate for the tests:
#   eval "$(scripts/postgres/start.sh)"   # exports TYPED_TOOLS_PG_URL
# and exits non-zero, with the reason on stderr, when no server can start.
# A server already running from that cluster is reused. Stop it with
# scripts/postgres/stop.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/postgres/dir.sh

find_bin() {
    local dir
    for dir in "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")" \
        /usr/lib/postgresql/*/bin /usr/local/bin; do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

if ! bin="$(find_bin)"; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "postgres: installing the postgresql package" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    fi
    bin="$(find_bin)" || { echo "postgres: no PostgreSQL server binaries (initdb, pg_ctl, postgres) found or installable" >&2; exit 1; }
fi

as_user=()
if [ "$(id -u)" = 0 ]; then
    user=typed-tools-pg
    if ! id "$user" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
    fi
    as_user=(runuser -u "$user" --)
fi

mkdir -p "$root"
if [ "${#as_user[@]}" -gt 0 ]; then
    chown "$user" "$root"
    "${as_user[@]}" test -w "$root" || {
        echo "postgres: user $user cannot reach $root: make its parent directories traversable (chmod o+x)" >&2
        exit 1
    }
fi
if [ ! -f "$root/data/PG_VERSION" ]; then
    "${as_user[@]}" "$bin/initdb" -D "$root/data" -U postgres --auth=trust -E UTF8 --no-locale >"$root/initdb.log" 2>&1 \
        || { cat "$root/initdb.log" >&2; exit 1; }
fi
if "${as_user[@]}" "$bin/pg_ctl" -D "$root/data" status >/dev/null 2>&1; then
    # Running already: its port is line 4 of postmaster.pid.
    port="$(sed -n 4p "$root/data/postmaster.pid")"
else
    # TYPED_TOOLS_PG_PORT, or the first free port from 54329 (another
    # checkout's server may hold one).
    port="${TYPED_TOOLS_PG_PORT:-}"
    if [ -z "$port" ]; then
        for candidate in $(seq 54329 54379); do
            if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
                port=$candidate
                break
            fi
        done
        [ -n "$port" ] || { echo "postgres: no free port in 54329-54379" >&2; exit 1; }
    fi
    "${as_user[@]}" "$bin/pg_ctl" -D "$root/data" -l "$root/server.log" -w -t 30 \
        -o "-p $port -k $root -c listen_addresses=127.0.0.1 -c max_connections=100" start >&2 \
        || { cat "$root/server.log" >&2; exit 1; }
fi
echo "export TYPED_TOOLS_PG_URL=postgres://postgres@127.0.0.1:$port/postgres"
