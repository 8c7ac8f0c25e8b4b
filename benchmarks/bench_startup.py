"""Start-up cost of the commands users wait for, as ratios to the imports they cannot avoid.

    python benchmarks/bench_startup.py                               # 15 interleaved rounds (~1 min)
    python benchmarks/bench_startup.py --rounds 30
    python benchmarks/bench_startup.py --baseline /tmp/linkcli_main   # also "before": another tree

Each round runs every command once in a fresh interpreter (same order, interleaved, so load
changes hit all of them alike); the figures are medians. Two clocks: wall time, and CPU time
(user + system of the child: the work only; on a machine loaded above its core count, wall time
mostly counts waiting for a core). Ratios, with the issue's goals:

* ``linkcli --help``                       / ``python -c "import typer"``                        (1.2)
* ``linkcli validate`` and ``linkcli info`` / ``python -c "import pydantic, yaml"``               (1.3)
* ``linkcli solve fourbar.yaml -o x.csv``   / ``python -c "import numpy, scipy, pydantic, yaml"`` (1.3)

and the same commands against their *floors*: the imports each command cannot do without while
it keeps its behaviour (typer parses the command line; the file format is pydantic models, and
``import pydantic`` alone loads neither ``BaseModel``'s machinery, ``Field`` nor the plugin scan
done when the first model class is built; validate, info and solve compile the mechanism with
numpy; info prints rich tables). The floor against the goal's baseline is the best ratio any
implementation with these dependencies can reach.

Bytecode: the children run with ``PYTHONDONTWRITEBYTECODE`` removed from their environment, so
the warm-up writes ``__pycache__`` and the timed runs load it, as an installed package does
(pip compiles at install). Without it every run compiled linkcli's ~40 imported sources again
(~140 ms CPU of ``linkcli validate`` in a profile, 1 Dec 2026).
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

#: what a command cannot avoid importing (see the module docstring)
PYDANTIC_MODEL = ("from pydantic import BaseModel, Field\n"
                  "class M(BaseModel):\n    x: float = Field(1.0, ge=0)\n")
FLOORS = {
    "floor: typer + pydantic model + yaml": "import typer, yaml\n" + PYDANTIC_MODEL,
    "floor: + numpy (validate)": "import typer, yaml, numpy\n" + PYDANTIC_MODEL,
    "floor: + numpy + rich table (info)": "import typer, yaml, numpy, rich.console, rich.table\n" + PYDANTIC_MODEL,
}


def linkcli_commands(prefix: str, out: str) -> dict[str, list[str]]:
    cli = [PY, "-m", "linkcli"]
    return {
        f"{prefix}linkcli --help": cli + ["--help"],
        f"{prefix}linkcli validate fourbar.yaml": cli + ["validate", "mechanisms/fourbar.yaml"],
        f"{prefix}linkcli info fourbar.yaml": cli + ["info", "mechanisms/fourbar.yaml"],
        f"{prefix}linkcli solve fourbar.yaml -o x.csv": cli + ["solve", "mechanisms/fourbar.yaml", "-o", out],
    }


def commands(out: str, baseline: bool) -> dict[str, list[str]]:
    cmds = {
        "python -c pass": [PY, "-c", "pass"],
        "import typer": [PY, "-c", "import typer"],
        "import pydantic, yaml": [PY, "-c", "import pydantic, yaml"],
        "import numpy, pydantic, yaml": [PY, "-c", "import numpy, pydantic, yaml"],
        "import numpy, scipy, pydantic, yaml": [PY, "-c", "import numpy, scipy, pydantic, yaml"],
        **{name: [PY, "-c", code] for name, code in FLOORS.items()},
        **linkcli_commands("", out),
    }
    if baseline:
        cmds.update(linkcli_commands("before: ", out))
    return cmds


GOALS = [("linkcli --help", "import typer", 1.2),
         ("linkcli validate fourbar.yaml", "import pydantic, yaml", 1.3),
         ("linkcli info fourbar.yaml", "import pydantic, yaml", 1.3),
         ("linkcli solve fourbar.yaml -o x.csv", "import numpy, scipy, pydantic, yaml", 1.3)]
#: the floors against the goals' baselines: the best any implementation could reach
FLOOR_VS_GOAL = [("floor: typer + pydantic model + yaml", "import pydantic, yaml"),
                 ("floor: + numpy (validate)", "import pydantic, yaml"),
                 ("floor: + numpy + rich table (info)", "import pydantic, yaml"),
                 ("floor: + numpy (validate)", "import numpy, scipy, pydantic, yaml")]
#: each command against its own floor: what is left to gain
VS_FLOOR = [("linkcli --help", "import typer"),
            ("linkcli validate fourbar.yaml", "floor: + numpy (validate)"),
            ("linkcli info fourbar.yaml", "floor: + numpy + rich table (info)"),
            ("linkcli solve fourbar.yaml -o x.csv", "floor: + numpy (validate)")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another checkout of linkcli (e.g. a `git worktree` of main) whose commands run as "
                         "'before: ...' in the same rounds")
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env_before = None
    if args.baseline is not None:
        env_before = dict(env, PYTHONPATH=str(args.baseline.resolve()) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(os.path.join(tmp, "x.csv"), args.baseline is not None)

        def run(name: str, cmd: list[str]) -> None:
            before = name.startswith("before: ")
            subprocess.run(cmd, cwd=args.baseline if before else REPO, env=env_before if before else env,
                           check=True, capture_output=True)

        times: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        print(f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
        for name, cmd in cmds.items():  # warm-up: file caches, __pycache__
            run(name, cmd)
        for _ in range(args.rounds):
            for name, cmd in cmds.items():
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                run(name, cmd)
                times[name].append(time.perf_counter() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        load_end = os.getloadavg()[0]
    med = {k: statistics.median(v) for k, v in times.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    for k in cmds:
        print(f"{k:<48} {1e3 * med[k]:8.1f} ms wall, {1e3 * mcpu[k]:8.1f} ms CPU (medians of {args.rounds})")

    def ratio(a: str, b: str, note: str = "") -> None:
        print(f"  {a:<46} / {b:<38} = {med[a] / med[b]:5.2f}x wall, {mcpu[a] / mcpu[b]:5.2f}x CPU{note}")

    print("goals (issue 11):")
    for cmd, base, goal in GOALS:
        if args.baseline is not None:
            ratio("before: " + cmd, base, f"  (goal {goal}x)")
        ratio(cmd, base, f"  (goal {goal}x)")
    print("floors against the goals' baselines (the best reachable with these dependencies):")
    for floor, base in FLOOR_VS_GOAL:
        ratio(floor, base)
    print("each command against its floor:")
    for cmd, floor in VS_FLOOR:
        if args.baseline is not None:
            ratio("before: " + cmd, floor)
        ratio(cmd, floor)
    print(f"load average at end {load_end:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
