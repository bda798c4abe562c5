#!/usr/bin/env python3
"""Lower bounds on the makespan of an exported task graph (doc/policy-sweep.md).

usage: graph_bounds.py GRAPH.json [--ncpu N] [--ncuda M] [--from-task A] [--to-task B]
                       [--after SHORTER.json] [--per K]

GRAPH.json is a `taskqcd ... --export-graph FILE` graph (doc/design.md "Task-graph
export"). Prints key=value lines, times in microseconds:
  tasks, edges        tasks and dependencies in the range considered
  tasks_nocost        tasks without a cost on any kind they may run on (counted as 0)
  nocost_codelets     their codelets, NAME:COUNT,... (empty when none)
  tasks_pinned        tasks with an owner (the bounds ignore owners: still lower bounds)
  ncpu, ncuda         the worker counts used (default: the graph's workers)
  per                 the divisor K applied to every time below
  area_us             best fractional assignment of the work to the workers, no dependencies
  cp_us               longest dependency path, each task at its cheapest kind
  bound_us            max(area_us, cp_us)
--from-task/--to-task keep the tasks with A <= id < B and the edges between them (for the
part of a run its own timer covers, after the program waited for all earlier tasks).
--after SHORTER.json keeps the tasks GRAPH.json has beyond the graph of a shorter run of
the same program (same codelets and access modes first, checked): e.g. the timed solves of a run with
--warmup beyond a run without, or the last N of 2N operator applications.
Plain python3, no third-party modules.
"""
import argparse
import json
import math
import sys

KINDS = ("cpu", "cuda")


def die(msg):
    print("graph_bounds.py: " + msg, file=sys.stderr)
    sys.exit(2)


def task_costs(task, nworkers):
    """{kind: cost} over the kinds the task may run on: allowed by `where`, present on the
    machine and with a known cost."""
    where = task.get("where", "any")
    cost = task.get("cost_us") or {}
    out = {}
    for k in KINDS:
        if where not in ("any", k) or nworkers[k] <= 0:
            continue
        c = cost.get(k)
        if c is None or (isinstance(c, float) and (math.isnan(c) or c < 0)):
            continue
        out[k] = float(c)
    return out


def load(path):
    try:
        with open(path) as f:
            g = json.load(f)
    except (OSError, ValueError) as e:
        die("cannot read %s: %s" % (path, e))
    if not isinstance(g, dict) or g.get("format") != "taskqcd-task-graph":
        die("%s: not a taskqcd-task-graph file" % path)
    if g.get("version") != 1:
        print("graph_bounds.py: warning: %s: format version %s, expected 1" % (path, g.get("version")),
              file=sys.stderr)
    return g


def prefix_length(path, g):
    """The id of g's first task beyond the graph in path, after checking that path's tasks
    are g's first tasks (same codelet, where and access modes): only then are g's
    remaining tasks the longer run's extra work."""
    short = load(path)["tasks"]
    long_ = g["tasks"]
    if len(short) > len(long_):
        die("--after %s: it has more tasks (%d) than the graph (%d)" % (path, len(short), len(long_)))
    for s, t in zip(short, long_):
        # handle ids may differ: the export names a handle by its address, and two runs
        # allocate differently; the access modes must agree
        for k, f in (("id", lambda x: x.get("id")), ("codelet", lambda x: x.get("codelet")),
                     ("where", lambda x: x.get("where")),
                     ("access modes", lambda x: [m for _, m in x.get("accesses", [])])):
            if f(s) != f(t):
                die("--after %s: task %s differs (%s: %r, %r): not a shorter run of the same program"
                    % (path, s.get("id"), k, f(s), f(t)))
    if len(long_) == len(short):
        return math.inf   # nothing beyond
    return long_[len(short)]["id"]


def area_bound(costs, n, m):
    """min T such that the work fits on n CPU and m CUDA workers, tasks split fractionally
    (the LP in doc/policy-sweep.md). costs: list of {kind: cost} (non-empty dicts)."""
    cpu_fixed = sum(c["cpu"] for c in costs if "cuda" not in c)
    gpu_fixed = sum(c["cuda"] for c in costs if "cpu" not in c)
    flex = [(c["cpu"], c["cuda"]) for c in costs if len(c) == 2]
    if m == 0:
        return cpu_fixed / n if n else 0.0
    if n == 0:
        return gpu_fixed / m
    # Fractional knapsack: the CUDA side takes the tasks that save the most CPU time per
    # unit of CUDA time first (largest c_cpu / c_cuda); the optimum moves along this
    # order, splitting at most one task.
    flex.sort(key=lambda t: -(t[0] / t[1]) if t[1] > 0 else -math.inf)
    gpu = gpu_fixed
    cpu = cpu_fixed + sum(c for c, _ in flex)
    best = max(cpu / n, gpu / m)   # every flexible task on a CPU
    for c, g in flex:
        # task moved to CUDA by the fraction y: CPU load cpu - y c, CUDA load gpu + y g;
        # the loads are equal at y = (m cpu - n gpu) / (m c + n g)
        if m * c + n * g > 0:
            y = (m * cpu - n * gpu) / (m * c + n * g)
            if 0.0 <= y <= 1.0:
                best = min(best, max((cpu - y * c) / n, (gpu + y * g) / m))
        cpu -= c
        gpu += g
        best = min(best, max(cpu / n, gpu / m))
    return best


def main():
    ap = argparse.ArgumentParser(description="Lower bounds on a task graph's makespan.")
    ap.add_argument("graph")
    ap.add_argument("--ncpu", type=int, help="CPU workers (default: the graph's)")
    ap.add_argument("--ncuda", type=int, help="CUDA workers (default: the graph's)")
    ap.add_argument("--from-task", type=int, default=None, help="first task id kept")
    ap.add_argument("--to-task", type=int, default=None, help="first task id not kept")
    ap.add_argument("--after", metavar="SHORTER", help="keep the tasks beyond this graph's")
    ap.add_argument("--per", type=float, default=1.0, help="divide every time by this")
    a = ap.parse_args()

    g = load(a.graph)
    if a.per <= 0:
        die("--per must be positive")

    nworkers = {k: sum(1 for w in g.get("workers", []) if w.get("kind") == k) for k in KINDS}
    if a.ncpu is not None:
        nworkers["cpu"] = a.ncpu
    if a.ncuda is not None:
        nworkers["cuda"] = a.ncuda
    if nworkers["cpu"] < 0 or nworkers["cuda"] < 0 or nworkers["cpu"] + nworkers["cuda"] == 0:
        die("need at least one worker (--ncpu/--ncuda)")

    lo = -math.inf if a.from_task is None else a.from_task
    if a.after:
        if a.from_task is not None:
            die("--after and --from-task exclude each other")
        lo = prefix_length(a.after, g)
    hi = math.inf if a.to_task is None else a.to_task
    tasks = [t for t in g.get("tasks", []) if lo <= t["id"] < hi]
    tasks.sort(key=lambda t: t["id"])
    weight = {}
    costs = []
    nocost = pinned = 0
    nocost_by = {}
    for t in tasks:
        c = task_costs(t, nworkers)
        if c:
            costs.append(c)
        else:
            nocost += 1
            nocost_by[t["codelet"]] = nocost_by.get(t["codelet"], 0) + 1
        pinned += t.get("owner", -1) >= 0
        weight[t["id"]] = min(c.values()) if c else 0.0

    # Longest path: edges go from a lower to a higher id, so one pass in id order.
    preds = {}
    nedges = 0
    for e in g.get("edges", []):
        u, v = e[0], e[1]
        if u in weight and v in weight:
            if u >= v:
                die("edge %d -> %d goes backwards" % (u, v))
            preds.setdefault(v, []).append(u)
            nedges += 1
    finish = {}
    for t in tasks:
        i = t["id"]
        finish[i] = weight[i] + max((finish[p] for p in preds.get(i, ())), default=0.0)
    cp = max(finish.values(), default=0.0)
    area = area_bound(costs, nworkers["cpu"], nworkers["cuda"])

    per = a.per
    print("tasks=%d" % len(tasks))
    print("edges=%d" % nedges)
    print("tasks_nocost=%d" % nocost)
    print("nocost_codelets=%s" % ",".join("%s:%d" % kv for kv in sorted(nocost_by.items())))
    print("tasks_pinned=%d" % pinned)
    print("ncpu=%d" % nworkers["cpu"])
    print("ncuda=%d" % nworkers["cuda"])
    print("per=%g" % per)
    print("area_us=%.3f" % (area / per))
    print("cp_us=%.3f" % (cp / per))
    print("bound_us=%.3f" % (max(area, cp) / per))


if __name__ == "__main__":
    main()
