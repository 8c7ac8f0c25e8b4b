"""Start-up cost of the commands users wait for, as ratios to the imports they cannot avoid.

    python benchmarks/bench_startup.py            # 15 interleaved rounds (~1 min)
    python benchmarks/bench_startup.py --rounds 30

Each round runs every command once in a fresh interpreter (same order, interleaved, so load
changes hit all of them alike); the figures are medians of the wall times. Ratios:

* ``linkcli --help``                       / ``python -c "import typer"``
* ``linkcli validate`` and ``linkcli info`` / ``python -c "import pydantic, yaml"``
* ``linkcli solve fourbar.yaml -o x.csv``   / ``python -c "import numpy, scipy, pydantic, yaml"``
* validate and info also against ``import numpy, pydantic, yaml`` (they compile the mechanism,
  which needs numpy: the floor they can reach)

The issue's goals: 1.2, 1.3, 1.3. ``python -c pass`` is printed for reference. The load
average (``os.getloadavg``) is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable


def commands(out: str) -> dict[str, list[str]]:
    cli = [PY, "-m", "linkcli"]
    return {
        "python -c pass": [PY, "-c", "pass"],
        "import typer": [PY, "-c", "import typer"],
        "import pydantic, yaml": [PY, "-c", "import pydantic, yaml"],
        "import numpy, pydantic, yaml": [PY, "-c", "import numpy, pydantic, yaml"],
        "import numpy, scipy, pydantic, yaml": [PY, "-c", "import numpy, scipy, pydantic, yaml"],
        "linkcli --help": cli + ["--help"],
        "linkcli validate fourbar.yaml": cli + ["validate", "mechanisms/fourbar.yaml"],
        "linkcli info fourbar.yaml": cli + ["info", "mechanisms/fourbar.yaml"],
        "linkcli solve fourbar.yaml -o x.csv": cli + ["solve", "mechanisms/fourbar.yaml", "-o", out],
    }


RATIOS = [("linkcli --help", "import typer", 1.2),
          ("linkcli validate fourbar.yaml", "import pydantic, yaml", 1.3),
          ("linkcli info fourbar.yaml", "import pydantic, yaml", 1.3),
          ("linkcli solve fourbar.yaml -o x.csv", "import numpy, scipy, pydantic, yaml", 1.3),
          # validate and info compile the mechanism (topology, mobility: numpy), so numpy is
          # part of their floor: the ratio against it says what is left to gain
          ("linkcli validate fourbar.yaml", "import numpy, pydantic, yaml", 1.3),
          ("linkcli info fourbar.yaml", "import numpy, pydantic, yaml", 1.3)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(os.path.join(tmp, "x.csv"))
        times: dict[str, list[float]] = {k: [] for k in cmds}
        print(f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
        for cmd in cmds.values():  # warm-up: file caches, __pycache__
            subprocess.run(cmd, cwd=REPO, env=env, check=True, capture_output=True)
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(args.rounds):
            for name, cmd in cmds.items():
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(cmd, cwd=REPO, env=env, check=True, capture_output=True)
                times[name].append(time.perf_counter() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        load_end = os.getloadavg()[0]
    med = {k: statistics.median(v) for k, v in times.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    for k, v in med.items():
        print(f"{k:<40} {1e3 * v:8.1f} ms wall, {1e3 * mcpu[k]:8.1f} ms CPU (medians of {args.rounds})")
    # CPU time (user + system of the child) counts the work only; wall time also counts waiting
    # for a core, which on a machine loaded above its core count dominates: both are printed
    for cmd, base, goal in RATIOS:
        print(f"{cmd:<40} / {base:<38} = {med[cmd] / med[base]:5.2f}x wall, {mcpu[cmd] / mcpu[base]:5.2f}x CPU  "
              f"(goal {goal}x)")
    print(f"load average at end {load_end:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
