#!/usr/bin/env python3
"""Checks what `smelt profile` writes against the plan it profiled.

usage: check_profile.py table.json trace.json memory.json THREADS

- the table: shares of every row (the overhead row included) add to 1;
  calls, percentiles and bounds are consistent;
- the trace parses as JSON (what Perfetto loads): a span per run on
  thread 0 with every step nested in its run, args with shapes, FLOPs
  and bytes; with THREADS > 1, work items on a worker's lane;
- the memory history: every arena buffer lives between its creating
  and its last step; buffers that do not share bytes and are live at
  the same step never overlap in the arena; every region fits the
  arena; the planned peak is the maximum over steps of the live bytes,
  at the step it names.
"""
import json
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_table(t):
    rows = t["rows"]
    if not rows:
        fail("table: no rows")
    over = [r for r in rows if r["overhead"]]
    if len(over) != 1:
        fail("table: %d overhead rows, expected 1" % len(over))
    total = sum(r["share"] for r in rows)
    if abs(total - 1.0) > 1e-4:
        fail("table: shares add to %.6f, not 1" % total)
    for r in rows:
        if r["calls"] != t["runs"] * max(r["steps"], 1):
            fail("table: row %s has %d calls for %d steps x %d runs"
                 % (r["name"], r["calls"], r["steps"], t["runs"]))
        if not (r["min_ms"] <= r["p50_ms"] <= r["p90_ms"] <= r["p99_ms"]):
            fail("table: row %s percentiles out of order" % r["name"])
        if r["bound"] not in ("compute", "memory", "-"):
            fail("table: row %s bound %r" % (r["name"], r["bound"]))
    print("table: %d rows, shares add to %.6f" % (len(rows), total))


def check_trace(tr, threads):
    ev = tr["traceEvents"]
    runs = [e for e in ev if e.get("cat") == "run"]
    steps = [e for e in ev if e["ph"] == "X" and e.get("cat") not in
             ("run", "work")]
    work = [e for e in ev if e.get("cat") == "work"]
    if not runs or not steps:
        fail("trace: %d runs, %d steps" % (len(runs), len(steps)))
    by_run = {r["args"]["run"]: r for r in runs}
    for s in steps:
        a = s["args"]
        for k in ("shapes", "flops", "bytes", "node", "kernel"):
            if k not in a:
                fail("trace: step event lacks args.%s" % k)
        if "[" not in a["shapes"] or "->" not in a["shapes"]:
            fail("trace: shapes %r" % a["shapes"])
        r = by_run[a["run"]]
        eps = 1e-3
        if s["tid"] != 0 or s["ts"] < r["ts"] - eps or \
           s["ts"] + s["dur"] > r["ts"] + r["dur"] + eps:
            fail("trace: step %d of run %d not inside its run"
                 % (a["step"], a["run"]))
    # thread 0 takes chunks of every parallel step itself, so a pool
    # always leaves work items (whether a worker got a chunk depends on
    # the OS scheduling it in time, so is not asserted)
    if threads > 1 and not work:
        fail("trace: %d threads but no work items" % threads)
    if threads == 1 and work:
        fail("trace: work items without a pool")
    span = {(s["args"]["run"], s["args"]["step"]): s for s in steps}
    names = {e["tid"] for e in ev if e.get("name") == "thread_name"}
    if names != set(range(threads)):
        fail("trace: lanes named %s for %d threads" % (sorted(names), threads))
    for w in work:
        a = w["args"]
        if not 0 <= w["tid"] < threads:
            fail("trace: work item on thread %d of %d" % (w["tid"], threads))
        s = span.get((a["run"], a["step"]))
        if s is None:
            fail("trace: work item of no step (%s)" % a)
        if w["tid"] == 0 and (w["ts"] < s["ts"] - 1e-3 or
                              w["ts"] + w["dur"] > s["ts"] + s["dur"] + 1e-3):
            fail("trace: thread 0's work item outside its step %d" % a["step"])
    lanes = sorted({e["tid"] for e in ev})
    print("trace: %d runs, %d step spans, %d work items, lanes %s"
          % (len(runs), len(steps), len(work), lanes))


def check_memory(m):
    bufs = m["buffers"]
    n_steps = len(m["steps"])
    arena = m["arena_bytes"]
    region = {}  # root id -> [first, last, offset, bytes]
    for b in bufs:
        if b["kind"] not in ("arena", "workspace") or b["first"] < 0:
            continue
        if not (0 <= b["first"] <= b["last"] < n_steps):
            fail("memory: buffer %s lives %d..%d of %d steps"
                 % (b["name"], b["first"], b["last"], n_steps))
        if b["kind"] == "workspace" and b["first"] != b["last"]:
            fail("memory: workspace %s outlives its step" % b["name"])
        root = b["shares"] if b["shares"] >= 0 else b["id"]
        if b["shares"] >= 0 and bufs[root]["offset"] != b["offset"]:
            fail("memory: %s shares %s at another offset"
                 % (b["name"], bufs[root]["name"]))
        r = region.setdefault(root, [b["first"], b["last"], b["offset"], 0])
        r[0] = min(r[0], b["first"])
        r[1] = max(r[1], b["last"])
        r[3] = max(r[3], b["bytes"])
    regs = list(region.items())
    for _, (f, l, off, size) in regs:
        if off < 0 or off + size > arena:
            fail("memory: region at %d of %d bytes outside the arena of %d"
                 % (off, size, arena))
    for i in range(len(regs)):
        for j in range(i + 1, len(regs)):
            a, b = regs[i][1], regs[j][1]
            live = a[0] <= b[1] and b[0] <= a[1]
            overlap = a[2] < b[2] + b[3] and b[2] < a[2] + a[3]
            if live and overlap and a[3] and b[3]:
                fail("memory: buffers %s and %s are live together and "
                     "overlap in the arena" % (bufs[regs[i][0]]["name"],
                                                bufs[regs[j][0]]["name"]))
    live = [0] * n_steps
    for _, (f, l, off, size) in regs:
        for s in range(f, l + 1):
            live[s] += size
    for s, st in enumerate(m["steps"]):
        if st["live_bytes"] != live[s]:
            fail("memory: step %d live %d, buffers say %d"
                 % (s, st["live_bytes"], live[s]))
    peak = max(live) if live else 0
    if m["planned_peak_bytes"] != peak:
        fail("memory: planned peak %d, max over steps %d"
             % (m["planned_peak_bytes"], peak))
    if peak and live[m["peak_step"]] != peak:
        fail("memory: peak step %d holds %d, not the peak"
             % (m["peak_step"], live[m["peak_step"]]))
    if peak > arena:
        fail("memory: planned peak %d above the arena %d" % (peak, arena))
    if m["measured_peak_rss_bytes"] <= 0:
        fail("memory: no measured peak RSS")
    print("memory: %d buffers, %d regions, peak %d bytes at step %d"
          % (len(bufs), len(regs), peak, m["peak_step"]))


def main():
    table, trace, memory, threads = sys.argv[1:5]
    with open(table) as f:
        check_table(json.load(f))
    with open(trace) as f:
        check_trace(json.load(f), int(threads))
    with open(memory) as f:
        check_memory(json.load(f))


main()
