#!/bin/sh
# The first push of a whole catalog to a feed receiver, measured (docs/feed.md "Pushing
# changes"): a release server with `--catalog CATALOG` and no built-in gifts, on a fresh SQLite
# database, pushing to scripts/feed-receiver.py; prints how long until the receiver held every
# product, what the server logged of its full sweep, and the server's peak resident memory.
#
#   cargo build --release -p giftgenius-server
#   python3 ../shared/bench/peers/make_catalog.py -n 100000 -o /tmp/c100k.json
#   scripts/bench-feed-push.sh /tmp/c100k.json 100000
set -eu
catalog=$1
expected=$2
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $server $receiver 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "bench-token-0123456789" > "$work/token"
printf '[{"name":"bench","url":"http://127.0.0.1:%s/v1","feed_id":"feed_bench","token_file":"token"}]' "$port" \
    > "$work/receivers.json"
python3 "$here/scripts/feed-receiver.py" "$port" bench-token-0123456789 &
receiver=$!
sleep 0.5
start=$(date +%s.%N)
GIFTGENIUS_LOG=info "$here/target/release/giftgenius-server" --port 0 --public-url http://127.0.0.1:8787 --builtin-catalog false --catalog "$catalog" \
    --db "$work/giftgenius.db" --feed-receivers "$work/receivers.json" --feed-poll-ms 100 \
    > /dev/null 2> "$work/server.log" &
server=$!
while :; do
    distinct=$(curl -s "http://127.0.0.1:$port/count" | python3 -c 'import json,sys; print(json.load(sys.stdin)["distinct"])')
    [ "$distinct" -ge "$expected" ] && break
    kill -0 $server 2>/dev/null || { echo "the server died:"; tail -5 "$work/server.log"; exit 1; }
    sleep 0.5
done
end=$(date +%s.%N)
hwm=$(grep VmHWM /proc/$server/status)
echo "every product at the receiver after $(echo "$end - $start" | bc) s (server start included)"
grep -o '"feed swept[^}]*\|feed swept.*' "$work/server.log" | head -1 || true
grep -E 'catalog loaded|loaded .* gifts' "$work/server.log" | head -1 || true
curl -s "http://127.0.0.1:$port/count"; echo
echo "server $hwm"
