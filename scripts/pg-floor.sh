#!/usr/bin/env bash
# The machine's ceiling for durable PostgreSQL commits (issue 28, item 5): how many purchases a
# second this PostgreSQL could take if a purchase were nothing but its commits. pgbench, 32
# clients, 2 threads, on a fresh database; every statement is its own transaction, committed
# durably (synchronous_commit=on, fsync=on: what the server runs with), and a "purchase" is a
# script of K such commits, so pgbench's tps is purchases/s for K commits each.
#
#   scripts/pg-floor.sh                     # K = 1 3 5 8, 10 s each
#   KS="1 8" SECONDS_EACH=5 scripts/pg-floor.sh
#
# Env: PG_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), CLIENTS (32).
# Each row is ~300 bytes, about an order's. Loopback only; the database is dropped at the end.
set -euo pipefail
PG=${PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
KS=${KS:-"1 3 5 8"}
SECONDS_EACH=${SECONDS_EACH:-10}
CLIENTS=${CLIENTS:-32}
DB=giftgenius_pg_floor
URL=${PG%/*}/$DB
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; psql "$PG" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT

psql "$PG" -qc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql "$URL" -qc "CREATE TABLE rows (id BIGSERIAL PRIMARY KEY, subject TEXT NOT NULL, body TEXT NOT NULL)"
echo "synchronous_commit=$(psql "$URL" -Atc 'SHOW synchronous_commit') fsync=$(psql "$URL" -Atc 'SHOW fsync') clients=$CLIENTS"
for k in $KS; do
  for _ in $(seq "$k"); do
    echo "INSERT INTO rows (subject, body) VALUES ('user-' || :client_id, repeat('x', 300));"
  done > "$WORK/purchase-$k.sql"
  out=$(pgbench -n -c "$CLIENTS" -j 2 -T "$SECONDS_EACH" -f "$WORK/purchase-$k.sql" "$URL" 2>&1)
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
  lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
  printf 'commits per purchase %-2s  purchases/s %8.0f  commits/s %8.0f  latency avg %s ms\n' \
    "$k" "$tps" "$(awk -v t="$tps" -v k="$k" 'BEGIN { print t * k }')" "$lat"
done
