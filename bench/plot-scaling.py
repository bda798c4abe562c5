#!/usr/bin/env python3
"""Speed-up of several GPUs over one, from the table bench/scaling.sh gpus writes
(row, setting, value, unit; rows named NAME-1gpu, NAME-<N>gpu, NAME-<N>ranks, NAME-<R>x<G>:
R ranks driving G GPUs each, NAME-<N>ranks-split: N ranks as a split grid).

Usage: python3 bench/plot-scaling.py TABLE.tsv OUT.png [TITLE] [--simulated SIM.tsv]   (needs matplotlib)
With --simulated (bench/simgrid-predict.sh's table, the same row names: one process driving
N simulated GPUs) each one-process bar gets the predicted speed-up (simulated one GPU over
simulated N) as a black diamond.
For M_pc rows the value is ms per application; for solves the sum of iteration times
(the propagator rows' wall clock of the solves is used for the 12-source propagator).
Issue 31's targets for the largest GPU count in the table are drawn as markers."""
import csv
import re
import sys

TARGETS = {2: {"wilson-64": 1.85, "wilson-48": 1.7, "wilson-32": 1.5, "solve48": 1.7, "prop12": 1.9},
           4: {"wilson-64": 3.4}, 8: {"wilson-64": 6.0}}


def load(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            m = re.match(r"(.+)-(?:(\d+)(gpu|ranks)|(\d+)x(\d+))(-any|-split)?$", r["row"])
            if not m or m.group(6) == "-any":
                continue
            if m.group(2):
                name, n, how = m.group(1), int(m.group(2)), m.group(3)
            else:   # NAME-RxG: R ranks driving G GPUs each
                name, n, how = m.group(1), int(m.group(4)) * int(m.group(5)), m.group(4) + "x" + m.group(5)
            if m.group(6) == "-split":
                how = "split"
            setting = r["setting"]
            if name.startswith("prop12") and setting != "wall of the solves":
                continue
            if name.startswith("solve") and setting != "sum of iteration times":
                continue
            key = (name, setting.replace(" recon 12", "").replace("sum of iteration times", "iterations"))
            rows.setdefault(key, {})[(n, how)] = float(r["value"])
    return rows


def main():
    args = sys.argv[1:]
    simulated = {}
    if "--simulated" in args:
        i = args.index("--simulated")
        simulated = load(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = load(args[0])
    labels, bars = [], {}
    for (name, setting), v in sorted(rows.items()):
        base = v.get((1, "gpu"))
        if not base:
            continue
        labels.append(f"{name}\n{setting}")
        for (n, how), t in v.items():
            if (n, how) != (1, "gpu"):
                bars.setdefault((n, how), {})[len(labels) - 1] = base / t
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(labels)), 4.2))
    width = 0.8 / max(1, len(bars))
    keys = [k for k, v in sorted(rows.items()) if v.get((1, "gpu"))]
    predicted = False
    for i, ((n, how), vals) in enumerate(sorted(bars.items())):
        xs = [x + (i - (len(bars) - 1) / 2) * width for x in vals]
        what = (f"{n} GPUs, one process" if how == "gpu" else f"{n} ranks, one GPU each" if how == "ranks"
                else f"{n} ranks, split grid" if how == "split"
                else f"{how.split('x')[0]} ranks, {how.split('x')[1]} GPUs each")
        ax.bar(xs, list(vals.values()), width, label=what)
        if how != "gpu":
            continue
        for x, xb in zip(vals, xs):
            sim = simulated.get(keys[x], {})
            if sim.get((1, "gpu")) and sim.get((n, "gpu")):
                ax.plot([xb], [sim[(1, "gpu")] / sim[(n, "gpu")]], "kD", ms=5,
                        label=None if predicted else "simulated (StarPU SimGrid)")
                predicted = True
    nmax = max((n for n, _ in bars), default=2)
    for x, lab in enumerate(labels):
        t = TARGETS.get(nmax, {}).get(lab.split("\n")[0])
        if t:
            ax.plot([x - 0.4, x + 0.4], [t, t], "k--", lw=1)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("speed-up over one GPU")
    ax.set_title(args[2] if len(args) > 2 else "bench/scaling.sh gpus", fontsize=9)
    ax.legend(fontsize=8, title="dashed: issue 31's target", title_fontsize=7)
    fig.tight_layout()
    fig.savefig(args[1], dpi=110)


if __name__ == "__main__":
    main()
