"""First run after installing: ``linkcli simulate``, ``linkcli forces`` and ``linkcli forces
--equilibrium`` of ``mechanisms/motor_fourbar.yaml`` as a user runs them.

Each case is a fresh ``python -m linkcli`` process (fresh numba cache directory and fresh record
of interpreted/compile costs, ``LINKCLI_JIT`` unset unless stated); its CPU time (user + system,
``resource.getrusage(RUSAGE_CHILDREN)``) is measured around the subprocess:

* baseline: ``python -c "import numpy, scipy, pydantic, yaml"`` (the floor of any command);
* simulate: first run (``auto``, empty cache and record): the kernels run interpreted; first
  compiling run: the same command with ``LINKCLI_JIT=always`` on the still empty cache (what
  ``auto`` does once the interpreted runs add up to the compile cost, or for a long run); warm
  run (``auto``, compiled kernels cached by the previous run); interpreted again (``never``);
* forces (73 points, the file's sweep) and ``--equilibrium``, each on its own empty cache and
  record: first run (``auto``), then with ``LINKCLI_JIT=always`` on the still empty cache (what
  ``auto`` did before these commands planned their kernels: compile on the first run), then
  ``auto`` again with the kernels cached;
* ``linkcli compile`` on an empty cache (ahead-of-time compilation of every kernel set) and
  warm, and each command after it.

Prints CPU seconds, ratios to the baseline and the load average (``uptime``).
Run: ``python benchmarks/bench_first_run.py [--no-compile-command] [--commands simulate,forces,equilibrium]``
(about 3 minutes).
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


COMMANDS = {"simulate": ["simulate", str(MODEL)], "forces": ["forces", str(MODEL)],
            "equilibrium": ["forces", "--equilibrium", str(MODEL)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-compile-command", action="store_true", help="skip the `linkcli compile` cases")
    parser.add_argument("--commands", default=",".join(COMMANDS), help="which commands (comma-separated): "
                        + ", ".join(COMMANDS))
    args = parser.parse_args()
    commands = [c.strip() for c in args.commands.split(",") if c.strip()]
    unknown = set(commands) - set(COMMANDS)
    if unknown:
        parser.error(f"unknown command(s) {', '.join(sorted(unknown))}; choose from {', '.join(COMMANDS)}")
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

        def cli(command: str) -> list[str]:
            return [sys.executable, "-m", "linkcli", *COMMANDS[command], "-o", out]

        rows.append(("baseline: import numpy, scipy, pydantic, yaml",
                     run([sys.executable, "-c", "import numpy, scipy, pydantic, yaml"], base_env)))
        if "simulate" in commands:
            env, sim = fresh("user"), cli("simulate")
            rows.append(("simulate: first run (auto: interpreted)", run(sim, env)))
            rows.append(("simulate: first compiling run (LINKCLI_JIT=always, empty cache)",
                         run(sim, dict(env, LINKCLI_JIT="always"))))
            rows.append(("simulate: warm run (auto: cached compiled kernels)", run(sim, env)))
            rows.append(("simulate: interpreted again (LINKCLI_JIT=never)", run(sim, dict(env, LINKCLI_JIT="never"))))
        for command in ("forces", "equilibrium"):
            if command in commands:
                env = fresh(command)
                rows.append((f"{command}: first run (auto)", run(cli(command), env)))
                rows.append((f"{command}: as before, compiling (LINKCLI_JIT=always, empty cache)",
                             run(cli(command), dict(env, LINKCLI_JIT="always"))))
                rows.append((f"{command}: again (auto, kernels cached)", run(cli(command), env)))
                rows.append((f"{command}: again (LINKCLI_JIT=always, kernels cached)",
                             run(cli(command), dict(env, LINKCLI_JIT="always"))))
        if not args.no_compile_command:
            env = fresh("image")
            rows.append(("linkcli compile (empty cache)", run([sys.executable, "-m", "linkcli", "compile"], env)))
            rows.append(("linkcli compile (cached)", run([sys.executable, "-m", "linkcli", "compile"], env)))
            for command in commands:
                rows.append((f"{command} after linkcli compile", run(cli(command), env)))
    load_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    baseline = rows[0][1][0]
    print(f"load before: {load}\nload after:  {load_after}")
    print(f"{'case':66s} {'CPU s':>8s} {'x baseline':>11s}")
    for name, (cpu, stderr) in rows:
        print(f"{name:66s} {cpu:8.2f} {cpu / baseline:11.1f}")
        said = [line for line in stderr.splitlines() if "compiling kernels" in line or line.startswith("kernels ")]
        for line in said:
            print(f"    stderr: {line}")


if __name__ == "__main__":
    main()
