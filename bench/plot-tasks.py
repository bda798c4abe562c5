#!/usr/bin/env python3
"""Summary and Gantt chart of a TaskQCD task log (TQ_TASK_LOG=FILE; tasks/task_log.c).

Usage: python3 bench/plot-tasks.py LOG [OUT.png] [--from US] [--to US]
Prints, for the window (default: the whole log), each worker's busy time, task count and
the idle gaps between its tasks (median, sum), then each codelet's count and mean duration
and its mean wait from submission to start. With OUT.png (needs matplotlib) draws one row
per worker, a bar per task coloured by codelet (a chain by its first entry), and face
transfers between ranks as thin bars on their own row."""
import csv
import signal
import statistics
import sys


def load(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def label(r):
    if r["first"] != "-":
        return f"chain {r['first'].replace('tq_', '')}..{r['last'].replace('tq_', '')}"
    return r["codelet"].replace("tq_", "")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # quiet when piped into head
    args = [a for a in sys.argv[1:]]
    lo, hi = None, None
    if "--from" in args:
        i = args.index("--from"); lo = float(args[i + 1]); del args[i:i + 2]
    if "--to" in args:
        i = args.index("--to"); hi = float(args[i + 1]); del args[i:i + 2]
    if not args:
        sys.exit(__doc__)
    rows = load(args[0])
    for r in rows:
        for k in ("submit", "start", "end"):
            r[k] = float(r[k])
    rows = [r for r in rows if (lo is None or r["end"] >= lo) and (hi is None or r["start"] <= hi)]
    if not rows:
        sys.exit("no task in the window")
    t0 = min(r["start"] for r in rows) if lo is None else lo
    t1 = max(r["end"] for r in rows) if hi is None else hi
    span = t1 - t0
    print(f"window {t0:.0f}-{t1:.0f} us ({span / 1e3:.3f} ms), {len(rows)} records")
    workers = {}
    for r in rows:
        key = r["worker_name"] if r["worker"] != "-1" else f"{r['codelet']} (rank {r['peer']})"
        workers.setdefault(key, []).append(r)
    print(f"{'worker':28s} {'tasks':>6s} {'busy ms':>9s} {'busy %':>7s} {'gap median us':>14s} {'gaps ms':>9s}")
    for w, rs in sorted(workers.items()):
        rs.sort(key=lambda r: r["start"])
        busy = sum(min(r["end"], t1) - max(r["start"], t0) for r in rs)
        gaps = [b["start"] - a["end"] for a, b in zip(rs, rs[1:]) if b["start"] > a["end"]]
        med = statistics.median(gaps) if gaps else 0.0
        print(f"{w:28s} {len(rs):6d} {busy / 1e3:9.3f} {100 * busy / span:6.1f}% {med:14.1f} {sum(gaps) / 1e3:9.3f}")
    per = {}
    for r in rows:
        if r["worker"] == "-1":
            continue
        per.setdefault(label(r), []).append(r)
    print(f"\n{'codelet':44s} {'count':>6s} {'mean us':>9s} {'wait us':>9s}")
    for name, rs in sorted(per.items(), key=lambda kv: -sum(r["end"] - r["start"] for r in kv[1])):
        d = statistics.mean(r["end"] - r["start"] for r in rs)
        w = statistics.mean(r["start"] - r["submit"] for r in rs)
        print(f"{name:44s} {len(rs):6d} {d:9.1f} {w:9.1f}")
    if len(args) < 2:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = sorted(workers)
    colours = {}
    cmap = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(12, 0.45 * len(names) + 1.8))
    for y, w in enumerate(names):
        for r in workers[w]:
            lab = label(r) if r["worker"] != "-1" else r["codelet"]
            if lab not in colours:
                colours[lab] = cmap(len(colours) % 20)
            ax.barh(y, (r["end"] - r["start"]) / 1e3, left=(r["start"] - t0) / 1e3, height=0.35 if r["worker"] == "-1" else 0.8,
                    color=colours[lab], edgecolor="none")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=7)
    ax.set_xlim(0, span / 1e3)
    ax.set_xlabel("ms")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
    ax.legend(handles, list(colours), fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    ax.set_title(f"{args[0]}: {span / 1e3:.3f} ms", fontsize=9)
    fig.tight_layout()
    fig.savefig(args[1], dpi=110)


if __name__ == "__main__":
    main()
