#!/usr/bin/env python3
"""One table from a bench-peers.sh run folder: suggest_gifts per server, catalog size and
concurrency (bench.sh's figures), GiftGenius's ratio to the faster peer, and the commit lines.

    python3 scripts/bench_table.py target/bench-peers/results/<run>
"""
import json
import pathlib
import re
import sys

NAMES = {"giftgenius": "GiftGenius (Rust, rmcp)", "python": "Python `mcp` 2.3.0", "ts": "TS SDK 1.32.2"}


def parse(path: pathlib.Path):
    text = path.read_text(errors="replace")
    summary = text.split("== summary", 1)[-1]
    runs = {}
    for m in re.finditer(
        r"c=\s*(\d+)\s+([\d.]+) calls/s\s+p50\s+([\d.]+) ms\s+p99\s+([\d.]+) ms.*?non200=(\d+) errors=(\d+)\s+rss_max ([\d.]+) MiB"
        r".*?steady.*?p99 ([\d.na]+) ms.*?server ([\d.]+), oha ([\d.]+), other ([\d.]+)",
        summary,
        re.S,
    ):
        c, rps, p50, p99, non200, errors, rss, steady, server, oha, other = m.groups()
        runs[int(c)] = dict(rps=float(rps), p50=float(p50), p99=float(p99), steady=steady, rss=float(rss),
                            bad=int(non200) + int(errors), cpu=float(server), oha=float(oha), other=float(other))
    hwm = re.search(r"VmHWM ([\d.]+) MiB", summary)
    idle = re.search(r"idle-before-load ([\d.]+) MiB", summary)
    return runs, (float(hwm.group(1)) if hwm else None), (float(idle.group(1)) if idle else None)


def main(run: pathlib.Path) -> None:
    rows, by = [], {}
    for f in sorted(run.glob("*-*.txt")):
        m = re.fullmatch(r"(giftgenius|python|ts)-(\d+)\.txt", f.name)
        if not m:
            continue
        server, n = m.group(1), int(m.group(2))
        runs, hwm, idle = parse(f)
        load = run / f"{server}-{n}.load.txt"
        ready = re.search(r"after ([\d.]+)s", load.read_text()) if load.exists() else None
        took = ""
        log = run / f"{server}-{n}.server.log"
        if server == "giftgenius" and log.exists():
            for line in log.read_text(errors="replace").splitlines():
                if '"catalog loaded"' in line:
                    took = f"{json.loads(line).get('fields', {}).get('took_ms', '?')} ms load+index"
        for c, r in sorted(runs.items()):
            by[(n, c, server)] = r
            rows.append((n, c, server, r, hwm, idle, ready.group(1) if ready else "?", took))
    print("| server | gifts | conc. | calls/s | p50 ms | p99 ms | p99 steady ms | RSS idle MiB | RSS max MiB | VmHWM MiB | ready s | server CPU | oha CPU | other CPU | failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = {"giftgenius": 0, "python": 1, "ts": 2}
    for n, c, server, r, hwm, idle, ready, took in sorted(rows, key=lambda x: (x[0], x[1], order[x[2]])):
        print(f"| {NAMES[server]} | {n:,} | {c} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['steady']} | "
              f"{idle or 0:.1f} | {r['rss']:.1f} | {hwm or 0:.1f} | {ready}{' (' + took + ')' if took else ''} | "
              f"{r['cpu']:.2f} | {r['oha']:.2f} | {r['other']:.2f} | {r['bad']} |")
    print()
    for (n, c, server), r in sorted(by.items()):
        if server != "giftgenius":
            continue
        peers = [by[(n, c, p)]["rps"] for p in ("python", "ts") if (n, c, p) in by]
        if peers and max(peers) > 0:
            print(f"- {n:,} gifts, concurrency {c}: GiftGenius {r['rps']:,.0f} calls/s = "
                  f"{r['rps'] / max(peers):.1f}x the faster peer ({max(peers):,.0f})")
    commits = run / "commits.txt"
    if commits.exists():
        print("\ncommit_order (in-repo load generator, release build):\n")
        print("```")
        print(commits.read_text().rstrip())
        print("```")
    limits = run / "limits.txt"
    if limits.exists():
        print("\n" + limits.read_text().strip())


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
