#!/usr/bin/env python3
"""Sums a render's trace (VELVET_TRACE=FILE, docs/PERFORMANCE.md) per thread.

    Tools/trace-summary.py trace.json [--render K] [--from-frame N]
    Tools/trace-summary.py trace.json [--render K] --startup [--depth D]

For each thread: its spans as a tree (a span inside another on the same thread is its
child), each path with its count, total and per-frame milliseconds; then the thread's time
in waits (fence.wait, queue.*, lookahead.wait) and in work, against the wall time of the
frames. A trace holds every render of the process (`velvet bench media` makes several: the
plain transcode, passthrough, then each beauty render; with --beauty two untimed warm-up
renders come first, so freqsep is render 4 and bilateral 5); --render K picks the K-th (from
0, default the last). Frames are its "encode" spans; --from-frame skips the first N (start-up
and the first frame's full detection search) by starting at the N-th encode.

--startup prints the start-up instead: every span from the render's start to the end of
its first frame's encode, thread by thread in time order (ms from the render's start, and
each span's length), down to depth D (default 2), then the first encode's end: what the
first frame waited for.
"""
import argparse
import collections
import json
import sys

WAITS = ("fence.wait", "queue.", "lookahead.wait")


def is_wait(name):
    return any(name == w or name.startswith(w) for w in WAITS)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--render", type=int, default=-1)
    parser.add_argument("--from-frame", type=int, default=0)
    parser.add_argument("--startup", action="store_true")
    parser.add_argument("--depth", type=int, default=2)
    args = parser.parse_args()
    with open(args.trace) as f:
        events = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    spans = [e for e in events if e["ph"] == "X"]
    renders = sorted((e for e in spans if e["name"] == "render"), key=lambda e: e["ts"])
    if not renders:
        sys.exit("trace-summary: no render in the trace")
    for index, render in enumerate(renders):
        count = sum(1 for e in spans if e["name"] == "encode" and render["ts"] <= e["ts"] < render["ts"] + render["dur"])
        print(f"render {index}: {count} frames in {render['dur'] / 1e6:.2f} s")
    render = renders[args.render]
    encodes = sorted(e["ts"] for e in spans
                     if e["name"] == "encode" and render["ts"] <= e["ts"] < render["ts"] + render["dur"])
    if args.startup:
        return startup(spans, names, render, encodes, args.depth)
    if len(encodes) <= args.from_frame + 1:
        sys.exit("trace-summary: fewer encoded frames than --from-frame + 2")
    start, end = encodes[args.from_frame], encodes[-1]
    frames = len(encodes) - 1 - args.from_frame
    wall = end - start
    print(f"{frames} frames from frame {args.from_frame}: {wall / 1000 / frames:.3f} ms a frame (wall)")
    by_thread = collections.defaultdict(list)
    for e in spans:
        if start <= e["ts"] < end:
            by_thread[e["tid"]].append(e)
    for tid in sorted(by_thread):
        rows = collections.OrderedDict()
        stack = []
        waits = work = 0.0
        for e in sorted(by_thread[tid], key=lambda e: (e["ts"], -e["dur"])):
            while stack and e["ts"] >= stack[-1][1]:
                stack.pop()
            path = "/".join([s[0] for s in stack] + [e["name"]])
            count, total = rows.get(path, (0, 0.0))
            rows[path] = (count + 1, total + e["dur"])
            # A thread's time: top-level spans are work or waits; a wait inside work (a fence
            # wait inside a frame's finish) moves its time from work to waits.
            if not stack:
                if is_wait(e["name"]):
                    waits += e["dur"]
                else:
                    work += e["dur"]
            elif is_wait(e["name"]) and not any(is_wait(s[0]) for s in stack):
                waits += e["dur"]
                work -= e["dur"]
            stack.append((e["name"], e["ts"] + e["dur"]))
        print(f"\n{names.get(tid, tid)}: work {work / 1000 / frames:.3f} ms a frame, waits {waits / 1000 / frames:.3f}, "
              f"idle {(wall - work - waits) / 1000 / frames:.3f}")
        for path, (count, total) in sorted(rows.items(), key=lambda r: -r[1][1]):
            print(f"  {path:60s} {count:7d} {total / 1000:10.1f} ms {total / 1000 / frames:8.3f} ms/frame")


def startup(spans, names, render, encodes, depth):
    """The render's spans up to its first frame's encode, per thread, nested by depth."""
    if not encodes:
        sys.exit("trace-summary: the render encoded no frame")
    origin = render["ts"]
    first = next(e for e in spans if e["name"] == "encode" and e["ts"] == encodes[0])
    end = first["ts"] + first["dur"]
    by_thread = collections.defaultdict(list)
    for e in spans:
        if e is not render and origin <= e["ts"] < end:
            by_thread[e["tid"]].append(e)
    for tid in sorted(by_thread, key=lambda t: min(e["ts"] for e in by_thread[t])):
        print(f"\n{names.get(tid, tid)}")
        stack = []
        for e in sorted(by_thread[tid], key=lambda e: (e["ts"], -e["dur"])):
            while stack and e["ts"] >= stack[-1]:
                stack.pop()
            if len(stack) < depth:
                print(f"  {(e['ts'] - origin) / 1000:8.2f} ms  {'  ' * len(stack)}{e['name']:{50 - 2 * len(stack)}s} {e['dur'] / 1000:8.2f} ms")
            stack.append(e["ts"] + e["dur"])
    print(f"\nfirst frame encoded at {(end - origin) / 1000:.2f} ms")


if __name__ == "__main__":
    main()
