"""First run after installing: ``linkcli simulate mechanisms/motor_fourbar.yaml`` as a user runs it.

Each case is a fresh ``python -m linkcli`` process (fresh numba cache directory and fresh record
of interpreted/compile costs, ``LINKCLI_JIT`` unset unless stated); its CPU time (user + system,
``resource.getrusage(RUSAGE_CHILDREN)``) is measured around the subprocess:

* baseline: ``python -c "import numpy, scipy, pydantic, yaml"`` (the floor of any command);
* first run (``auto``, empty cache and record): the kernels run interpreted;
* first compiling run: the same command with ``LINKCLI_JIT=always`` on the still empty cache
  (what ``auto`` does once the interpreted runs add up to the compile cost, or for a long run);
* warm run (``auto``, compiled kernels cached by the previous run);
* ``linkcli compile`` on an empty cache (ahead-of-time compilation of every kernel) and warm.

Prints CPU seconds, ratios to the baseline and the load average (``uptime``).
Run: ``python benchmarks/bench_first_run.py [--no-compile-command]`` (about 2 minutes).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "mechanisms" / "motor_fourbar.yaml"


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """CPU seconds of one subprocess, and its stderr."""
    before = child_cpu()
    out = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True)
    cpu = child_cpu() - before
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({out.returncode}):\n{out.stderr}")
    return cpu, out.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-compile-command", action="store_true", help="skip the `linkcli compile` cases")
    args = parser.parse_args()
    base_env = {k: v for k, v in os.environ.items() if k not in ("LINKCLI_NO_JIT", "LINKCLI_JIT", "NUMBA_CACHE_DIR")}
    base_env["PYTHONPATH"] = str(REPO) + os.pathsep + base_env.get("PYTHONPATH", "")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "run.csv")

        def fresh(name: str) -> dict[str, str]:
            env = dict(base_env, NUMBA_CACHE_DIR=str(Path(tmp) / name / "numba"),
                       LINKCLI_JIT_RECORD=str(Path(tmp) / name / "record.json"))
            return env

        sim = [sys.executable, "-m", "linkcli", "simulate", str(MODEL), "-o", out]
        rows.append(("baseline: import numpy, scipy, pydantic, yaml",
                     run([sys.executable, "-c", "import numpy, scipy, pydantic, yaml"], base_env)))
        env = fresh("user")
        rows.append(("first run (auto: interpreted)", run(sim, env)))
        rows.append(("first compiling run (LINKCLI_JIT=always, empty cache)",
                     run(sim, dict(env, LINKCLI_JIT="always"))))
        rows.append(("warm run (auto: cached compiled kernels)", run(sim, env)))
        rows.append(("second run interpreted (LINKCLI_JIT=never)", run(sim, dict(env, LINKCLI_JIT="never"))))
        if not args.no_compile_command:
            env = fresh("image")
            rows.append(("linkcli compile (empty cache)", run([sys.executable, "-m", "linkcli", "compile"], env)))
            rows.append(("linkcli compile (cached)", run([sys.executable, "-m", "linkcli", "compile"], env)))
            rows.append(("simulate after linkcli compile", run(sim, env)))
    load_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    baseline = rows[0][1][0]
    print(f"load before: {load}\nload after:  {load_after}")
    print(f"{'case':58s} {'CPU s':>8s} {'x baseline':>11s}")
    for name, (cpu, stderr) in rows:
        print(f"{name:58s} {cpu:8.2f} {cpu / baseline:11.1f}")
        said = [line for line in stderr.splitlines() if "compiling kernels" in line or line.startswith("kernels ")]
        for line in said:
            print(f"    stderr: {line}")


if __name__ == "__main__":
    main()
