#!/usr/bin/env bash
# Start a throw-away PostgreSQL server for the tests on a loopback port.
#   eval "$(scripts/postgres.sh start)"   -> exports PGHOST, PGPORT, PGUSER, WORKFLOW_PGDATA
#   scripts/postgres.sh stop
# Installs Debian's postgresql package when no server binaries are found.
set -euo pipefail

find_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
  done
  return 1
}

as_owner() {
  # initdb and postgres refuse to run as root: run them as the postgres user then.
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local bindir
  if ! bindir=$(find_bindir); then
    echo "installing PostgreSQL (Debian package)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
    bindir=$(find_bindir)
  fi
  local data port
  data=$(mktemp -d /tmp/workflow-pg.XXXXXX)
  chmod 755 "$data"
  [ "$(id -u)" = 0 ] && chown postgres "$data"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_owner "$bindir/initdb" -D "$data/db" -U postgres -A trust -E UTF8 --no-locale >/dev/null
  as_owner "$bindir/pg_ctl" -D "$data/db" -l "$data/server.log" -w -o \
    "-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null
  echo "export PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres WORKFLOW_PGDATA=$data"
}

stop() {
  local bindir
  bindir=$(find_bindir) || return 0
  [ -n "${WORKFLOW_PGDATA:-}" ] && [ -d "$WORKFLOW_PGDATA/db" ] || return 0
  as_owner "$bindir/pg_ctl" -D "$WORKFLOW_PGDATA/db" -m immediate stop >/dev/null || true
  rm -rf "$WORKFLOW_PGDATA"
}

"$@"
