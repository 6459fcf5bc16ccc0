"""The Python layer's own overhead, per run and per event, against the
binary alone, measured in the same run (a ratio, not absolute times: the
machine is shared and noisy).

    python python/bench/overhead.py [--runs 15]

Baseline: the binary run with --stream-events by subprocess, its output
read to the end and not parsed. Measured: massgen.run_sync on the same
question (spawn, read and parse every event line, build the result).
The two alternate, so drifts in machine load hit both alike. Two teams of
different sizes give the fixed cost per run and, from the difference, the
cost per event.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

import massgen
from massgen._run import invocation


def command(q: str, **kw: object) -> list[str]:
    return invocation("bench", q, **kw).argv  # type: ignore[arg-type]


def measure(config: str, runs: int) -> tuple[float, float, float]:
    """Median seconds per run, binary alone and through massgen.run, and
    the mean number of event lines per run."""
    q = "What is the capital of France?"
    argv = command(q, config=config, enable_logging=False)
    base, lib, events = [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
        base.append(time.perf_counter() - t)
        events.append(out.count(b"\n"))
        t = time.perf_counter()
        massgen.run_sync(q, config=config, enable_logging=False)
        lib.append(time.perf_counter() - t)
    return statistics.median(base), statistics.median(lib), statistics.mean(events)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--small", default="@examples/sim_single_agent")
    ap.add_argument("--large", default="@examples/sim_three_agents")
    a = ap.parse_args()
    rows = []
    for config in (a.small, a.large):
        b, m, ev = measure(config, a.runs)
        rows.append((b, m, ev))
        print(f"{config}: {ev:.0f} events; binary alone {b * 1000:.1f} ms, massgen.run {m * 1000:.1f} ms, "
              f"ratio {m / b:.3f}, overhead {(m - b) * 1000:.2f} ms per run")
    # Per event: what the library does with each line (parse, check the
    # version, dispatch on the type), timed on the lines of a real run.
    lines = subprocess.run(command("q", config=a.large, enable_logging=False), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, check=True).stdout.splitlines()
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        for raw in lines:
            ev = json.loads(raw)
            if ev.get("v") != 1 or ev.get("type") == "finished":
                pass
    per_line = (time.perf_counter() - t) / (n * len(lines))
    b2 = rows[1][0]
    print(f"per event: {per_line * 1e6:.1f} µs to parse and dispatch a line "
          f"({per_line * rows[1][2] / b2 * 100:.2f}% of the binary's run time for this team)")

if __name__ == "__main__":
    main()
