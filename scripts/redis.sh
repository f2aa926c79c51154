#!/usr/bin/env bash
# Start a throw-away Redis server for the tests on a loopback port.
#   eval "$(scripts/redis.sh start)"   -> exports WORKFLOW_REDIS_PORT, WORKFLOW_REDIS_DIR
#   scripts/redis.sh stop
# Installs Debian's redis-server package when the server is not found.
# The server keeps nothing on disk: no snapshots, no append-only file.
set -euo pipefail

start() {
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    echo "installing Redis (Debian package)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq redis-server >&2
  fi
  local dir port
  dir=$(mktemp -d /tmp/workflow-redis.XXXXXX)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" \
    --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/server.log" \
    --save "" --appendonly no >&2
  # --daemonize returns before the server listens: wait until it answers.
  local tries=0
  until [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ]; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ]; then
      echo "Redis did not start on port $port; see $dir/server.log" >&2
      return 1
    fi
    sleep 0.05
  done
  echo "export WORKFLOW_REDIS_PORT=$port WORKFLOW_REDIS_DIR=$dir"
}

stop() {
  [ -n "${WORKFLOW_REDIS_DIR:-}" ] && [ -d "$WORKFLOW_REDIS_DIR" ] || return 0
  local pid="" tries=0
  [ -f "$WORKFLOW_REDIS_DIR/redis.pid" ] && pid=$(cat "$WORKFLOW_REDIS_DIR/redis.pid")
  if [ -n "${WORKFLOW_REDIS_PORT:-}" ]; then
    redis-cli -h 127.0.0.1 -p "$WORKFLOW_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  fi
  if [ -n "$pid" ]; then
    # A server that did not answer the shutdown above is told by signal.
    kill "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 100 ]; do
      tries=$((tries + 1))
      sleep 0.05
    done
  fi
  rm -rf "$WORKFLOW_REDIS_DIR"
}

"$@"
