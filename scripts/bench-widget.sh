#!/usr/bin/env bash
# The packed widget's render time against the React peer in one interleaved loop, and its size.
#
#   cargo xtask bench-widget           # builds the widget and the server, then runs this
#   RUNS=5 cargo xtask bench-widget    # fewer render runs (default 20)
#
# 1. A real suggest_gifts result: browser-tests/bench-fixture.mjs calls the preview's "results"
#    fixture on the real server and writes its structuredContent and _meta.
# 2. ../shared/bench/react-peer (copied to BENCH_DIR first, never run in place; its node_modules
#    stay there between runs) runs its own measure.sh with PEER_HTML = the packed widget and
#    PEER_FIXTURE / PEER_META = that result: sizes (raw, gzip -9 -n, brotli) and navigation →
#    first result card over window.openai, the widget's first card being the server-rendered
#    first paint. Then the same loop (its render-time.mjs, cold Chromium per run) once more with
#    the React page and the widget timed to its wasm view holding the cards (interactive).
# 3. browser-tests/bench.mjs: the same two times over both bridges in the preview host, MCP Apps
#    included, and the no-WebAssembly path.
#
# Env: RUNS (20), PEER_SRC (../shared/bench/react-peer), BENCH_DIR (target/bench-widget),
# GIFTGENIUS_WIDGET_HTML and GIFTGENIUS_SERVER_BIN (set by xtask), GIFTGENIUS_CHROMIUM.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEER_SRC=${PEER_SRC:-$ROOT/../shared/bench/react-peer}
WORK=${BENCH_DIR:-$ROOT/target/bench-widget}
RUNS=${RUNS:-20}
HTML=${GIFTGENIUS_WIDGET_HTML:-$ROOT/dist/giftgenius-widget.html}
export CHROMIUM=${GIFTGENIUS_CHROMIUM:-/usr/bin/chromium}
# The result card of the results state; skeleton cards (loading) do not count.
SELECTOR='.gg-root[data-state="results"] .gg-card:not(.gg-skeleton)'
WASM_SELECTOR='html[data-wasm="ready"] #giftgenius-root .gg-root[data-state="results"] .gg-card'

[[ -f $PEER_SRC/measure.sh ]] || { echo "no React peer at $PEER_SRC (set PEER_SRC)" >&2; exit 2; }
[[ -f $HTML ]] || { echo "no packed widget at $HTML (cargo xtask widget)" >&2; exit 2; }
mkdir -p "$WORK/react-peer" "$WORK/fixture"
# A fresh copy of the peer's files each run (read-only at the source); its installs stay.
(cd "$PEER_SRC" && tar cf - --exclude=node_modules --exclude=dist --exclude=.measure .) | (cd "$WORK/react-peer" && tar xf -)
chmod -R u+w "$WORK/react-peer"

echo "== a real suggest_gifts result"
node "$ROOT/browser-tests/bench-fixture.mjs" "$WORK/fixture"

echo "== React peer and GiftGenius (first paint) in the peer's loop: $PEER_SRC/measure.sh, $RUNS runs"
cd "$WORK/react-peer"
RUNS=$RUNS PEER_HTML=$HTML PEER_SELECTOR=$SELECTOR PEER_FIXTURE=$WORK/fixture/results.json \
  PEER_META=$WORK/fixture/meta.json bash measure.sh

echo "== React peer and GiftGenius (wasm interactive) in the same loop, cold Chromium per run"
node scripts/instrument.mjs "$HTML" "$WORK/fixture/results.json" .measure/peer-wasm.html \
  --selector "$WASM_SELECTOR" --meta "$WORK/fixture/meta.json"
node scripts/render-time.mjs --runs "$RUNS" --mode cli .measure/react.html .measure/peer.html .measure/peer-wasm.html \
  > .measure/render-cli-wasm.jsonl
node -e '
const rows = require("fs").readFileSync(".measure/render-cli-wasm.jsonl", "utf8").trim().split("\n").map(JSON.parse);
console.log("| page | N | nav start → first card | stand-in → first card |\n|---|---|---|---|");
for (const r of rows) {
  const n = r.nav_to_results, s = r.standin_to_results;
  console.log(`| ${r.page} | ${r.runs} | ${n.median_ms} [${n.p25_ms}–${n.p75_ms}] | ${s.median_ms} [${s.p25_ms}–${s.p75_ms}] |`);
}
'

echo "== browser-tests/bench.mjs: both bridges in the preview host, wasm and no-wasm ($RUNS runs)"
cd "$ROOT/browser-tests"
node bench.mjs "$RUNS"
