#!/usr/bin/env bash
# Stops the server scripts/postgres/start.sh started, if it runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/postgres/dir.sh
[ -f "$root/data/postmaster.pid" ] || exit 0
for dir in /usr/lib/postgresql/*/bin /usr/local/bin "$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/pg_ctl)")"; do
    if [ -x "$dir/pg_ctl" ]; then
        if [ "$(id -u)" = 0 ]; then
            runuser -u typed-tools-pg -- "$dir/pg_ctl" -D "$root/data" -m fast -w stop >/dev/null 2>&1 || true
        else
            "$dir/pg_ctl" -D "$root/data" -m fast -w stop >/dev/null 2>&1 || true
        fi
        exit 0
    fi
done
