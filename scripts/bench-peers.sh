#!/usr/bin/env bash
# suggest_gifts side by side: GiftGenius against the official Python and TypeScript MCP SDK
# peers of ../shared/bench/peers, with that folder's own bench.sh (oha), at several catalog
# sizes, in one run, printed as one table. Then commit_order (unique keys and a duplicate
# storm) on SQLite and on PostgreSQL with the in-repo load generator.
#
#   cargo xtask bench-peers            # = scripts/bench-peers.sh
#   SIZES="300 100000" SERVERS="giftgenius ts" DURATION=5s cargo xtask bench-peers
#
# Env: SIZES (default "300 100000 1000000"), SERVERS (default "giftgenius python ts"),
# DURATION/WARMUP/CONCURRENCY (bench.sh's, default 10s/2s/"1 32"), COMMITS=0 to skip the
# commit benchmarks, BUILD=0 to use the release binaries already built, PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
# PEERS_SRC (default ../shared/bench/peers), BENCH_DIR (default target/bench-peers).
#
# The peers folder is copied to BENCH_DIR first (never run in place); its Python venv, its
# node_modules and oha (cargo install, pinned) are installed there or in the tools cache, once.
# GiftGenius runs as built for release with its end-state defaults (local accounts, durable
# writes: SQLite synchronous=FULL) and --catalog FILE --builtin-catalog false, with two limits
# off because one address sends all the load: --daily-suggestion-limit 0 and
# --rate-limit-per-minute 0 (both named in the output). Loopback only; every run is bounded.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS_SRC=${PEERS_SRC:-$ROOT/../shared/bench/peers}
WORK=${BENCH_DIR:-$ROOT/target/bench-peers}
SIZES=${SIZES:-"300 100000 1000000"}
SERVERS=${SERVERS:-"giftgenius python ts"}
TOOLS=${GIFTGENIUS_TOOLS:-$HOME/.cache/giftgenius/tools}
OHA_VERSION=1.16.0
export OHA=$TOOLS/oha-$OHA_VERSION/bin/oha
PG_ADMIN_URL=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
PORT_GG=8103 PORT_PY=8101 PORT_TS=8102
RUN=$WORK/results/$(date -u +%Y%m%dT%H%M%SZ)

[[ -f $PEERS_SRC/bench.sh ]] || { echo "no peers folder at $PEERS_SRC (set PEERS_SRC)" >&2; exit 2; }
mkdir -p "$WORK" "$RUN"

# --- setup (idempotent) -------------------------------------------------------------------
echo "== setup in $WORK"
mkdir -p "$WORK/peers"
# A copy, refreshed from the source each run; generated data and installs stay.
(cd "$PEERS_SRC" && tar --exclude=./data --exclude=./results --exclude=./ts_peer/node_modules -cf - .) |
  (cd "$WORK/peers" && tar -xf -)
chmod -R u+w "$WORK/peers"
PEERS=$WORK/peers
if [[ $SERVERS == *python* ]]; then
  if [[ ! -x $WORK/.venv/bin/uvicorn ]]; then
    python3 -m venv "$WORK/.venv"
    "$WORK/.venv/bin/pip" install --quiet -r "$PEERS/python_peer/requirements.txt"
  fi
fi
if [[ $SERVERS == *ts* && ! -d $PEERS/ts_peer/node_modules ]]; then
  (cd "$PEERS/ts_peer" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [[ ! -x $OHA ]]; then
  echo "installing oha $OHA_VERSION (compiles once, a few minutes)"
  cargo install oha --version "$OHA_VERSION" --locked --root "$TOOLS/oha-$OHA_VERSION" --quiet
fi
# xtask builds its release binaries (crates/xtask/src/bins.rs) and names the server in
# GIFTGENIUS_SERVER_BIN; the load generator is an example (it needs dev-dependencies), built here.
RELEASE=${CARGO_TARGET_DIR:-$ROOT/target}/release
if [[ ${BUILD:-1} != 0 ]]; then  # BUILD=0: use the release binaries already in $RELEASE
  if [[ -n ${GIFTGENIUS_SERVER_BIN:-} ]]; then
    (cd "$ROOT" && cargo build --release --quiet -p giftgenius-server --example loadgen)
  else
    (cd "$ROOT" && cargo build --release --quiet -p giftgenius-server --bins --example loadgen)
  fi
fi
GG=${GIFTGENIUS_SERVER_BIN:-$RELEASE/giftgenius-server}
WIDGET=$ROOT/dist/giftgenius-widget.html
if [[ ! -f $WIDGET ]]; then
  WIDGET=$WORK/placeholder-widget.html   # tools/call never reads it; the widget is not measured here
  echo '<!doctype html><title>placeholder</title>' > "$WIDGET"
fi

# --- helpers ------------------------------------------------------------------------------
PIDS=()
stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  PIDS=()
}
trap stop_all EXIT
ready() { # ready PORT: tools/list answers
  curl -s -o /dev/null --max-time 2 -X POST -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
    -d '{"jsonrpc":"2.0","id":0,"method":"tools/list"}' "http://127.0.0.1:$1/mcp"
}
wait_ready() { # wait_ready PORT NAME -> prints seconds to ready
  local t0=$(date +%s.%N)
  for _ in $(seq 1800); do
    if ready "$1"; then awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; return 0; fi
    sleep 0.1
  done
  echo "$2 did not come up on port $1" >&2; return 1
}
busy_pct() {
  local a b; a=($(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)); sleep 1
  b=($(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat))
  echo $(( (b[1]-a[1]) ? 100*(b[0]-a[0])/(b[1]-a[1]) : 0 ))
}
wait_quiet() { # the machine is shared: wait (at most QUIET_WAIT s) for other work to stop
  local p i
  for ((i = 0; i < ${QUIET_WAIT:-120}; i += 3)); do
    p=$(busy_pct); (( p < 10 )) && return 0
    (( i % 30 == 0 )) && echo "waiting for a quiet machine (busy ${p}%)"; sleep 2
  done
  echo "WARNING: machine still busy (${p}%), benchmarking anyway (see 'other' CPU per run)"
}

start_server() { # start_server NAME CATALOG -> sets PID, PORT
  local name=$1 cat=$2 log=$RUN/$1-$3.server.log
  case $name in
    giftgenius)
      rm -f "$WORK/gg.db"*
      "$GG" --port $PORT_GG --catalog "$cat" --builtin-catalog false --daily-suggestion-limit 0 \
        --rate-limit-per-minute 0 --db "$WORK/gg.db" --widget-html "$WIDGET" --log-format json > "$log" 2>&1 &
      PID=$!; PORT=$PORT_GG ;;
    python)
      (cd "$PEERS/python_peer" && CATALOG="$cat" exec "$WORK/.venv/bin/uvicorn" server:app --host 127.0.0.1 \
        --port $PORT_PY --workers 1 --no-access-log --log-level warning) > "$log" 2>&1 &
      PID=$!; PORT=$PORT_PY ;;
    ts)
      (cd "$PEERS/ts_peer" && CATALOG="$cat" PORT=$PORT_TS NODE_ENV=production exec node server.mjs) > "$log" 2>&1 &
      PID=$!; PORT=$PORT_TS ;;
  esac
  PIDS+=("$PID")
}

# --- suggest_gifts ------------------------------------------------------------------------
echo "== suggest_gifts: sizes [$SIZES], servers [$SERVERS]; results in $RUN"
echo "GiftGenius limits turned off for this benchmark: --daily-suggestion-limit 0, --rate-limit-per-minute 0" | tee "$RUN/limits.txt"
mkdir -p "$PEERS/data"
for n in $SIZES; do
  cat=$PEERS/data/catalog-$n.json
  [[ -f $cat ]] || python3 "$PEERS/make_catalog.py" -n "$n" -o "$cat"
  for s in $SERVERS; do
    echo "######## $s, $n gifts"
    start_server "$s" "$cat" "$n"
    secs=$(wait_ready "$PORT" "$s")
    echo "ready after ${secs}s (process start to first tools/list answer)" | tee "$RUN/$s-$n.load.txt"
    wait_quiet
    (cd "$PEERS" && ./bench.sh "$PORT" "$PID") 2>&1 | tee "$RUN/$s-$n.txt" | grep -E '^(c=|      |rss:|check)' || true
    stop_all
  done
done

# --- commit_order -------------------------------------------------------------------------
if [[ ${COMMITS:-1} != 0 ]]; then
  LOADGEN=$RELEASE/examples/loadgen
  export GIFTGENIUS_WIDGET_HTML=$WIDGET
  for db in sqlite postgres; do
    for scenario in "commit-unique 1 200" "commit-unique 32 40" "commit-storm 32 20"; do
      if [[ $db == postgres ]]; then
        name=gg_bench_$(date +%s%N)
        psql -q "$PG_ADMIN_URL" -c "CREATE DATABASE $name" >/dev/null ||
          { echo "PostgreSQL is not reachable at $PG_ADMIN_URL (set PG_ADMIN_URL)" >&2; exit 1; }
        export LOADGEN_DB=${PG_ADMIN_URL%/*}/$name
      else
        unset LOADGEN_DB
      fi
      wait_quiet
      # shellcheck disable=SC2086
      "$LOADGEN" $scenario 2>/dev/null | grep -E '^commit' | sed "s/^/$db /" | tee -a "$RUN/commits.txt"
      [[ $db == postgres ]] && psql -q "$PG_ADMIN_URL" -c "DROP DATABASE $name WITH (FORCE)" >/dev/null
    done
  done
  psql -At "$PG_ADMIN_URL" -c "SHOW synchronous_commit" -c "SHOW fsync" |
    paste -sd' ' | sed 's/^/postgresql: synchronous_commit fsync = /' | tee -a "$RUN/commits.txt"
fi

# --- one table ----------------------------------------------------------------------------
python3 "$ROOT/scripts/bench_table.py" "$RUN" | tee "$RUN/table.md"
echo "raw output: $RUN"
