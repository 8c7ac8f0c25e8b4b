"""Mutation testing by planted bugs: does the test suite catch realistic mistakes?

Each mutation below is one small, realistic bug (a dropped term, a unit left unconverted, a
check disabled), written as an exact text replacement in one source file. For every mutation
the script copies the repository's tracked files to a temporary folder, plants the bug there
(the working tree is never touched), runs the tests that should catch it and records:

* ``caught``   -- the tests failed (good);
* ``survived`` -- the tests passed with the bug in place (a gap in the tests);
* ``stale``    -- the text to replace is no longer in the file (the code changed: update the
  mutation so it plants the same bug in the new code);
* ``timeout``  -- the tests did not finish in time (neither caught nor survived: rerun with a
  longer ``--timeout`` or a smaller test selection).

First, every distinct test selection runs once on an UNMUTATED copy in the same environment;
tests that fail there (e.g. a test of the numba dispatch, with numba off) are deselected for
the mutations and listed, so a mutation only counts as caught by a test that passes without it.

Usage (from the repository root; not part of CI: a full run takes several minutes)::

    python tests/mutation/run_mutations.py              # every mutation
    python tests/mutation/run_mutations.py -k edge      # those whose id contains "edge"
    python tests/mutation/run_mutations.py --list       # list them
    python tests/mutation/run_mutations.py --jobs 2     # two mutations at a time

It prints one line per mutation and the score ``caught / (caught + survived)``; exit status 1
when any mutation survived or is stale. Numba compilation is switched off in the copies
(``LINKCLI_NO_JIT=1`` / ``NUMBA_DISABLE_JIT=1``): the compiled and interpreted kernels are tested
to agree elsewhere, and recompiling every kernel for every copy would take minutes each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str  # relative to the repository root
    old: str  # exact text, must occur exactly once
    new: str
    tests: tuple[str, ...]  # pytest arguments (files or node ids) expected to catch it
    why: str


UNITS = ("tests/test_units_invariance.py", "tests/test_compile.py", "tests/test_dynamics_profiles.py",
         "tests/test_dynamics_springs.py")
KINEMATICS = ("tests/reference", "tests/test_kinematics_fast.py", "tests/test_compile.py", "tests/test_examples.py",
              "tests/test_examples_analyses.py")

MUTATIONS = [
    # -- the seven edge bugs of issue #14 ------------------------------------------------------
    Mutation("edge-driver-phase-unit", "linkcli/compile.py",
             '"phase": d.phase * angle_scale', '"phase": d.phase', UNITS,
             "harmonic driver phase used in the file's angle unit (deg) as if radians"),
    Mutation("edge-spring-stiffness-unit", "linkcli/compile.py",
             'axial_stiffness=arr([getattr(e, "stiffness", 0.0) for _, e in axial])',
             'axial_stiffness=arr([getattr(e, "stiffness", 0.0) / b.ls for _, e in axial])',
             UNITS, "linear spring stiffness taken per file length unit (N/mm) instead of N/m"),
    Mutation("edge-spring-free-length-unit", "linkcli/compile.py",
             'getattr(e, "free_length", 0.0) * b.ls', 'getattr(e, "free_length", 0.0)', UNITS,
             "spring free length left in the file's length unit (mm as m)"),
    Mutation("edge-centripetal-dropped", "linkcli/core/velocity.py",
             "return A[..., :3] + np.cross(A[..., 3:], p) + np.cross(V[..., 3:], point_velocity(V, p))",
             "return A[..., :3] + np.cross(A[..., 3:], p)", KINEMATICS,
             "frame acceleration columns without the centripetal term w x (w x r)"),
    Mutation("edge-crossing-event-late", "linkcli/core/sweep.py",
             'SweepEvent(int(i), "singular_crossing"', 'SweepEvent(int(i) + 1, "singular_crossing"', KINEMATICS,
             "singular-crossing event reported one grid point late"),
    Mutation("edge-ik-ignores-limits", "linkcli/core/inverse.py",
             "q_new = np.clip(q[a] + dq, mech.q_lower, mech.q_upper)", "q_new = q[a] + dq",
             ("tests/reference", "tests/test_cli.py"), "IK steps leave the joint limits"),
    Mutation("edge-fine-branch-check-off", "linkcli/core/continuation.py",
             "return dev > 0.25 * span + 1e-6", "return False", KINEMATICS,
             "no distance check of the fine points between coarse sweep points against their Hermite "
             "guesses (both paths)"),
    Mutation("edge-continuation-det-check-off", "linkcli/core/continuation.py",
             "return det0 * det1 < 0", "return False", KINEMATICS,
             "continuation accepts a det J_p sign flip at once (a jump to the other mode near a change point; "
             "both paths)"),
    Mutation("edge-fine-det-check-off", "linkcli/core/continuation.py",
             "return (det_a == det_b) & (det != det_a)", "return False", KINEMATICS,
             "no det J_p sign check of the fine sweep points (both paths)"),
    # -- core ----------------------------------------------------------------------------------
    Mutation("core-spatial-jacobian-no-jr-inv", "linkcli/core/loop_closure.py",
             "Q = tf.right_jacobian_inv_so3(phi) @ np.swapaxes(R_B, -1, -2)", "Q = np.swapaxes(R_B, -1, -2)",
             ("tests/reference",), "spatial loop Jacobian without the inverse right Jacobian of SO(3)"),
    Mutation("core-kernel-spatial-jacobian-no-jr-inv", "linkcli/core/sweep_kernel.py",
             "cf = _series_or(th, exact, 1 / 12", "cf = 0.0 * _series_or(th, exact, 1 / 12",
             ("tests/test_sweep_kernel.py",),
             "the sweep kernel's spatial rotation rows with Jr^-1 reduced to I + K / 2"),
    Mutation("core-continuation-branch-check-off", "linkcli/core/continuation.py",
             "return dev > 0.3 * moved + 1e-8", "return False", KINEMATICS,
             "continuation corrector accepts a solution on another branch (both paths)"),
    Mutation("core-rpy-order", "linkcli/core/transforms.py",
             "return rot_z(rpy[..., 2]) @ rot_y(rpy[..., 1]) @ rot_x(rpy[..., 0])",
             "return rot_x(rpy[..., 0]) @ rot_y(rpy[..., 1]) @ rot_z(rpy[..., 2])",
             ("tests/test_format_reference.py", "tests/test_transforms.py", "tests/test_examples.py",
              "tests/reference"),
             "roll-pitch-yaw composed in the wrong order"),
    Mutation("core-universal-axis-order", "linkcli/compile.py",
             '"universal": [(X, True), (Y, True)]', '"universal": [(Y, True), (X, True)]',
             ("tests/test_format_reference.py", "tests/test_compile.py", "tests/test_examples.py", "tests/reference"),
             "universal joint turns about y first (format says x, then y of the joint frame)"),
    Mutation("core-modified-dh-alpha-sign", "linkcli/compile.py",
             "T_parent = T_prev @ tf.dh_modified(0.0, 0.0, a, alpha)",
             "T_parent = T_prev @ tf.dh_modified(0.0, 0.0, a, -alpha)",
             ("tests/test_format_reference.py", "tests/reference", "tests/test_compile.py", "tests/test_examples.py"),
             "modified DH twist angle with the wrong sign"),
    Mutation("core-acceleration-bias-dropped", "linkcli/core/velocity.py",
             "A[..., v, :] = A[..., u, :] + sign * term[..., s:s + n, :].sum(axis=-2)",
             "A[..., v, :] = A[..., u, :]", KINEMATICS,
             "link accelerations without the joint terms (only the parent's acceleration)"),
]


def _copy_repo(dst: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)


def _pytest(root: Path, tests: tuple[str, ...], extra: list[str], timeout: float) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root), LINKCLI_NO_JIT="1", NUMBA_DISABLE_JIT="1", CI="true",
               PYTHONDONTWRITEBYTECODE="1")
    present = [t for t in tests if (root / t.split("::")[0]).exists()]
    cmd = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *extra, *present]
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)


def _failures(stdout: str) -> list[str]:
    """Node ids of the FAILED/ERROR lines of a pytest summary."""
    return [ln.split(" ", 1)[1].split(" - ", 1)[0] for ln in stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]


def baseline(tests: tuple[str, ...], timeout: float) -> tuple[str, list[str]]:
    """('ok' or 'timeout', node ids failing on the unmutated code) for one test selection."""
    with tempfile.TemporaryDirectory(prefix="linkcli-mut-baseline-") as tmp:
        root = Path(tmp)
        _copy_repo(root)
        try:
            proc = _pytest(root, tests, [], timeout)
        except subprocess.TimeoutExpired:
            return "timeout", []
        return "ok", _failures(proc.stdout)


def run_one(m: Mutation, timeout: float, deselect: list[str]) -> tuple[str, float, str]:
    """(outcome, seconds, detail) of one planted bug."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"linkcli-mut-{m.id}-") as tmp:
        root = Path(tmp)
        _copy_repo(root)
        path = root / m.file
        text = path.read_text(encoding="utf-8")
        if text.count(m.old) != 1:
            return "stale", 0.0, f"{m.file}: the text to replace occurs {text.count(m.old)} times"
        path.write_text(text.replace(m.old, m.new), encoding="utf-8")
        extra = ["-x"] + [f"--deselect={node}" for node in deselect]
        try:
            proc = _pytest(root, m.tests, extra, timeout)
        except subprocess.TimeoutExpired:
            return "timeout", time.perf_counter() - start, f"the tests did not finish in {timeout:.0f} s"
        seconds = time.perf_counter() - start
        failed = _failures(proc.stdout)
        if proc.returncode == 0:
            return "survived", seconds, "all selected tests passed"
        return "caught", seconds, ("by " + failed[0]) if failed else proc.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="run only mutations whose id contains this text")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--jobs", type=int, default=1, help="mutations run at a time (default 1)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per mutation (default 900)")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTATIONS if args.k in m.id]
    if args.list:
        for m in chosen:
            print(f"{m.id:40s} {m.file:32s} {m.why}")
        return 0
    selections = sorted({m.tests for m in chosen})
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        base = dict(zip(selections, pool.map(lambda t: baseline(t, args.timeout), selections), strict=True))
        for tests, (state, failing) in base.items():
            if state != "ok" or failing:
                print(f"baseline ({' '.join(tests)}): {state}; failing without any mutation, deselected: "
                      f"{', '.join(failing) or '-'}", flush=True)
        results = list(pool.map(lambda m: run_one(m, args.timeout, base[m.tests][1]), chosen))
    for m, (outcome, seconds, detail) in zip(chosen, results, strict=True):
        print(f"{outcome:9s} {m.id:40s} {seconds:6.1f} s  {detail}", flush=True)
    count = {k: sum(r[0] == k for r in results) for k in ("caught", "survived", "stale", "timeout")}
    print(f"\nscore: {count['caught']}/{count['caught'] + count['survived']} caught "
          f"({count['survived']} survived, {count['stale']} stale, {count['timeout']} timed out)")
    return 0 if count["caught"] == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
