#!/usr/bin/env python3
"""Summary of a GPU timeline recorded by bench/cupti_trace.c (TQ_CUPTI_TRACE file).

Usage: python3 bench/gpu-timeline.py TRACE [--last FRACTION | --first SECONDS] [--png OUT.png --span US] [--list N]
The window is the last FRACTION (default 0.5) of the GPU activity, past warm-up, or with
--first its first SECONDS (a run's start: a multigrid set-up, say). Prints,
per GPU: busy time (union of kernels, copies and memsets), idle gaps (count, median, sum);
per kernel name: count, mean and median duration; per host thread: time inside CUDA runtime
calls and the calls' counts and mean durations, and how long after its launch call each GPU's kernels
started (the host's lead; traces with the correlation column). With --png, draws the last SPAN us (default
1000) as one row per GPU stream. With --list, prints N consecutive kernels of each GPU from
the middle of the window, each with its stream, start and end (us from the first) and
duration: where one operator application's kernels lie against each other."""
import csv
import statistics
import sys
from collections import defaultdict


def short(name):
    for cut in ("(", "<"):
        name = name.split(cut)[0]
    return name[-48:]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    last, first, png, span = 0.5, None, None, 1000.0
    if "--first" in args:
        i = args.index("--first"); first = float(args[i + 1]) * 1e6; del args[i:i + 2]
    if "--last" in args:
        i = args.index("--last"); last = float(args[i + 1]); del args[i:i + 2]
    if "--png" in args:
        i = args.index("--png"); png = args[i + 1]; del args[i:i + 2]
    if "--span" in args:
        i = args.index("--span"); span = float(args[i + 1]); del args[i:i + 2]
    listed = 0
    if "--list" in args:
        i = args.index("--list"); listed = int(args[i + 1]); del args[i:i + 2]
    with open(args[0]) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for r in rows:
        r["start"] = int(r["start"]) / 1e3   # us
        r["end"] = int(r["end"]) / 1e3
    gpu = [r for r in rows if r["kind"] in ("kernel", "memcpy", "memset")]
    if not gpu:
        sys.exit("no GPU activity in the trace")
    t0, t1 = min(r["start"] for r in gpu), max(r["end"] for r in gpu)
    if first is not None:
        lo, t1 = t0, min(t1, t0 + first)
        win = [r for r in gpu if r["start"] <= t1]
        print(f"window: the first {(t1 - lo) / 1e3:.3f} ms of the GPU activity")
    else:
        lo = t1 - last * (t1 - t0)
        win = [r for r in gpu if r["start"] >= lo]
        print(f"window: the last {100 * last:.0f} % of the GPU activity, {(t1 - lo) / 1e3:.3f} ms")
    print(f"{'GPU':>4s} {'ops':>7s} {'busy ms':>9s} {'busy %':>7s} {'gaps':>6s} {'gap med us':>11s} {'gap p90 us':>11s} {'gaps ms':>8s}")
    for dev in sorted({r["device"] for r in win}, key=int):
        ops = sorted((r["start"], r["end"]) for r in win if r["device"] == dev)
        busy, gaps, cur_s, cur_e = 0.0, [], ops[0][0], ops[0][1]
        for s, e in ops[1:]:
            if s > cur_e:
                busy += cur_e - cur_s
                gaps.append(s - cur_e)
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        busy += cur_e - cur_s
        span_dev = t1 - lo
        med = statistics.median(gaps) if gaps else 0.0
        p90 = sorted(gaps)[int(0.9 * len(gaps))] if gaps else 0.0
        print(f"{dev:>4s} {len(ops):7d} {busy / 1e3:9.3f} {100 * busy / span_dev:6.1f}% {len(gaps):6d} {med:11.1f} {p90:11.1f} {sum(gaps) / 1e3:8.3f}")
        # where the idle time lies: gaps by length, and the longest with what bounds them
        bins = [(0, 10), (10, 100), (100, 1000), (1000, 10000), (10000, float("inf"))]
        print("      idle by gap length: " + ", ".join(
            f"{a:g}-{b:g} us {sum(g for g in gaps if a <= g < b) / 1e3:.1f} ms ({sum(1 for g in gaps if a <= g < b)})"
            for a, b in bins))
        named = sorted((r for r in win if r["device"] == dev), key=lambda r: r["start"])
        edge, longest = named[0]["end"], []
        for i in range(1, len(named)):
            if named[i]["start"] > edge:
                longest.append((named[i]["start"] - edge, edge - lo, named[i - 1]["name"], named[i]["name"]))
            edge = max(edge, named[i]["end"])
        for g, at, before, after in sorted(longest, reverse=True)[:8]:
            print(f"      gap {g:9.1f} us at {at / 1e3:9.3f} ms: after {short(before)}, before {short(after)}")
    per = defaultdict(list)
    for r in win:
        per[(r["device"], r["kind"], short(r["name"]))].append(r["end"] - r["start"])
    print(f"\n{'GPU':>4s} {'operation':50s} {'count':>6s} {'mean us':>8s} {'median us':>9s} {'sum ms':>8s}")
    for (dev, kind, name), d in sorted(per.items(), key=lambda kv: (int(kv[0][0]), -sum(kv[1]))):
        print(f"{dev:>4s} {kind + ' ' + name:50s} {len(d):6d} {statistics.mean(d):8.2f} {statistics.median(d):9.2f} {sum(d) / 1e3:8.3f}")
    api = [r for r in rows if r["kind"] in ("runtime", "driver") and lo <= r["start"] <= t1]
    if api:
        print(f"\n{'thread':>10s} {'call':40s} {'count':>7s} {'mean us':>8s} {'sum ms':>8s}")
        calls = defaultdict(list)
        for r in api:
            calls[(r["stream"], r["name"])].append(r["end"] - r["start"])
        for (thr, name), d in sorted(calls.items(), key=lambda kv: -sum(kv[1]))[:24]:
            print(f"{thr:>10s} {name:40s} {len(d):7d} {statistics.mean(d):8.2f} {sum(d) / 1e3:8.3f}")
        # how far ahead the host launched each kernel (its launch call has its correlation id)
        launch = {r.get("correlation"): r for r in rows if r["kind"] == "runtime" and r.get("correlation")}
        for dev in sorted({r["device"] for r in win if r["kind"] == "kernel"}, key=int):
            lag = [k["start"] - launch[k["correlation"]]["end"] for k in win
                   if k["kind"] == "kernel" and k["device"] == dev and k.get("correlation") in launch]
            if lag:
                print(f"GPU {dev}: kernels started {statistics.median(lag):.0f} us (median), {min(lag):.0f} us (least)"
                      f" after their launch call returned ({len(lag)} kernels)")
    for dev in sorted({r["device"] for r in win}, key=int) if listed else []:
        kern = sorted((r for r in win if r["device"] == dev and r["kind"] == "kernel"), key=lambda r: r["start"])
        part = kern[len(kern) // 2:len(kern) // 2 + listed]
        print(f"GPU {dev}: {len(part)} kernels from the middle of the window (us from the first)")
        for r in part:
            print(f"  stream {r['stream']:>6s} {r['start'] - part[0]['start']:8.1f} - {r['end'] - part[0]['start']:8.1f}"
                  f" ({r['end'] - r['start']:6.1f})  {short(r['name'])}")
    if not png:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lo2 = t1 - span
    show = [r for r in gpu if r["end"] >= lo2]
    lanes = sorted({(int(r["device"]), int(r["stream"])) for r in show})
    names = sorted({short(r["name"]) for r in show})
    cmap = plt.get_cmap("tab20")
    colour = {n: cmap(i % 20) for i, n in enumerate(names)}
    fig, ax = plt.subplots(figsize=(14, 0.5 * len(lanes) + 2))
    for y, lane in enumerate(lanes):
        for r in show:
            if (int(r["device"]), int(r["stream"])) == lane:
                ax.barh(y, r["end"] - r["start"], left=r["start"] - lo2, color=colour[short(r["name"])], height=0.8)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([f"GPU {d} stream {s}" for d, s in lanes])
    ax.set_xlabel("us")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n]) for n in names]
    ax.legend(handles, names, fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
