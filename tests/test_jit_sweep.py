"""The sweep kernel set (linkcli.core.sweep_kernel, planned by linkcli.core.sweep._plan) chooses
compiled or interpreted on its own, independently of the process-wide mode jit.py fixes for the
other kernel sets: a process kept interpreted (the equilibrium, a short simulate) still runs a
long sweep with the cached compiled kernel; a compiled sweep does not fix the dynamics kernels to
compiled; a cold compile of the sweep kernel is recorded like the other sets'."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linkcli.analyses.forces import ForcesRequest, run_equilibrium
from linkcli.analyses.inputs import Sweep
from linkcli.compile import compile_mechanism
from linkcli.core import jit, sweep
from linkcli.core import kinetostatics as _kernels  # noqa: F401  (imported compiled before a test fakes an interpreted process)
from linkcli.io.loader import load_mechanism

REPO = Path(__file__).resolve().parent.parent
MOTOR = REPO / "mechanisms" / "motor_fourbar.yaml"
HAVE_NUMBA = jit.self_contained_compiling_possible()
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed (or LINKCLI_JIT=never)")


def motor():
    loaded = load_mechanism(MOTOR)
    return loaded, compile_mechanism(loaded.model)


class _Seen(list):
    """The kernel modules of the sweeps an analysis asked for, in order; ``points``: their sizes."""

    def __init__(self) -> None:
        super().__init__()
        self.points: list[int] = []

    def of_size(self, n: int) -> list:
        return [pk for pk, m in zip(self, self.points, strict=True) if m == n]


@pytest.fixture
def interpreted_process(monkeypatch, tmp_path):
    """This process fixed interpreted kernels for its other sets (as ``forces --equilibrium``'s
    plan(None) does), the sweep kernel cached but not yet run here, the record in tmp_path."""
    monkeypatch.setattr(jit, "_numba", False)
    monkeypatch.setenv("LINKCLI_JIT", "auto")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    monkeypatch.setattr(sweep, "_compiled_loaded", lambda: False)
    monkeypatch.setattr(sweep, "_rent_in_process", 0.0)
    kernels = _Seen()
    run = sweep._solve_sweep_kernel

    depth = [0]

    def spy(mech, Q, q0, tol, max_step, pk):  # the sweeps an analysis asked for: not the path that
        if depth[0] == 0:                     # carries the estimate's branch to the first input
            kernels.append(pk)                # (sweep._follow_branch: the same kernel module pk)
            kernels.points.append(len(Q))
        depth[0] += 1
        try:
            return run(mech, Q, q0, tol, max_step, pk)
        finally:
            depth[0] -= 1

    monkeypatch.setattr(sweep, "_solve_sweep_kernel", spy)
    return kernels


def compiled(pk) -> bool:
    return hasattr(pk.sweep, "signatures")  # a numba dispatcher


@needs_numba
def test_a_long_equilibrium_sweep_in_an_interpreted_process_uses_the_cached_compiled_kernel(interpreted_process,
                                                                                             monkeypatch):
    loaded, mech = motor()
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: True)
    # the points where the projected interpreted time pays for loading the cached kernel
    per_point = sweep._work_units(mech, 1) * sweep.DEFAULT_SECONDS_PER_UNIT
    load_points = jit.COMPILED_LOAD_S / per_point / (1 - 1 / jit.COMPILED_SPEEDUP)
    n_long = int(2 * load_points)
    assert not jit.compiled_kernels_possible()  # the other kernel sets stay interpreted
    out = run_equilibrium(mech, ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 6.28, None, n_long)]), loaded)
    # the path's sweep (the equilibrium's Newton iterates follow the branch by short sweeps of
    # their own, each planned by the same rule)
    assert len(interpreted_process.of_size(n_long)) == 1 and compiled(interpreted_process.of_size(n_long)[0])
    assert jit._numba is False  # the process mode is untouched
    # a short one (below the load cost) runs the interpreted copy; both find the same equilibria
    short = run_equilibrium(mech, ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 6.28, None, 73)]), loaded)
    assert len(interpreted_process.of_size(73)) == 1 and not compiled(interpreted_process.of_size(73)[0])
    assert out.n_cases == short.n_cases == 4
    long_q = np.sort(np.asarray(out.table.columns[0].values, dtype=float))
    short_q = np.sort(np.asarray(short.table.columns[0].values, dtype=float))
    # the equilibria are found by root-finding from the sweep's sign changes: independent of the
    # sweep's spacing to the search tolerance (1e-6 rad is far above it, far below the spacing)
    np.testing.assert_allclose(long_q, short_q, atol=1e-6)


@needs_numba
def test_never_and_missing_numba_keep_the_sweep_interpreted(interpreted_process, monkeypatch):
    _, mech = motor()
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: True)
    for env, value in (("LINKCLI_JIT", "never"), ("LINKCLI_NO_JIT", "1")):
        monkeypatch.setenv(env, value)
        p = sweep._plan(mech, 10**6)
        assert not p.compile and "never" in p.reason
        monkeypatch.delenv(env)
        monkeypatch.setenv("LINKCLI_JIT", "auto")
    monkeypatch.setattr(jit, "numba_available", lambda: False)
    assert not sweep._plan(mech, 10**6, many=True).compile and sweep._compiled_kernel is not None


@needs_numba
def test_a_long_compiled_sweep_does_not_fix_the_dynamics_kernels(monkeypatch, tmp_path):
    """In this process (mode not fixed yet): a compiled sweep leaves it unfixed, so a small
    simulate afterwards is planned on its own (interpreted on a cold cache), not "fixed earlier"."""
    monkeypatch.setattr(jit, "_numba", None)
    monkeypatch.setenv("LINKCLI_JIT", "auto")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: True)
    _, mech = motor()
    Q = np.linspace(0.0, 2 * np.pi, 36001)[:, None]
    assert sweep._plan(mech, len(Q)).compile
    res = sweep.solve_sweep(mech, Q, mech.q_init)
    assert sweep._compiled_loaded() and (res.status == 0).all()
    assert not jit.mode_fixed()
    monkeypatch.setattr(jit, "_set_compiling", lambda compile_kernels: None)  # (keep the suite's mode)
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: False)
    p = jit.plan_kernels("simulate", jit.work_units(100, 100, 3))
    assert "fixed earlier" not in p.reason and not p.compile


@needs_numba
def test_importing_the_compiled_sweep_kernel_fixes_no_mode(tmp_path):
    """A fresh process (its own numba cache and record): importing the compiled sweep kernel
    compiles lazily and leaves the process mode open; a small simulate is then planned on its own."""
    code = ("import sys; from linkcli.core import jit, sweep; pk = sweep._compiled_kernel(); "
            "print(hasattr(pk.sweep, 'signatures'), 'numba' in sys.modules, jit.mode_fixed()); "
            "p = jit.plan_kernels('simulate', jit.work_units(100, 100, 3)); print(p.compile, p.reason)")
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "LINKCLI_JIT_RECORD": str(tmp_path / "record.json"), "LINKCLI_JIT": "auto"}
    env.pop("LINKCLI_NO_JIT", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()
    assert first == "True True False"
    assert second.startswith("False interpreted:") and "fixed earlier" not in second


@needs_numba
def test_a_cold_compile_of_the_sweep_kernel_is_recorded(interpreted_process, monkeypatch, tmp_path):
    """The compile cost is learned (the run's CPU less what a cached run costs, at least 1 s:
    jit.record_run) and the rent starts afresh; an interpreted run adds rent."""
    _, mech = motor()
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: False)
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"sweep": {"rent_paid_s": 0.2, "compile_s": 1.0}}))
    short = np.linspace(0.0, 1.0, 20)[:, None]
    p = sweep._plan(mech, len(short))
    assert not p.compile  # 20 points: interpreted (0.2 s rent paid of a 1 s compile)
    sweep.solve_sweep(mech, short, mech.q_init)
    assert json.loads(record.read_text())["sweep"]["runs"] == 1
    Q = np.linspace(0.0, 2 * np.pi, 20001)[:, None]
    p = sweep._plan(mech, len(Q))
    assert p.compile and p.cold and p.compile_s == 1.0
    sweep.solve_sweep(mech, Q, mech.q_init)  # (numba's cache of this suite: a real compile is tested above)
    e = json.loads(record.read_text())["sweep"]
    assert e["rent_paid_s"] == 0.0 and e["compile_s"] >= 1.0
    assert compiled(interpreted_process[-1])


def test_the_record_learns_the_kernels_own_cpu_not_the_route_to_the_first_input(monkeypatch, tmp_path):
    """An interpreted sweep records the CPU of its own continuation per work unit, not the
    continuation that carries the estimate's branch to its first input (sweep._follow_branch:
    more kernel sweeps) nor loading the interpreted copy: a short sweep far from the estimate's
    inputs taught the record thousands of times the kernel's rate, and a later 361-point solve
    then compiled for ~40 s. A clock that advances one tick per kernel sweep makes it exact:
    the sweep asked for is one tick, the route before it more."""
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    monkeypatch.setattr(sweep, "_compiled_loaded", lambda: False)
    monkeypatch.setattr(sweep, "_rent_in_process", 0.0)
    monkeypatch.setattr(sweep, "_plan", lambda mech, n, many=False: jit.Plan(False, False, "interpreted (test)"))
    monkeypatch.setattr(jit, "self_contained_compiling_possible", lambda: True)
    pk = sweep._interpreted_kernel()
    ticks = [0.0]
    real_sweep = pk.sweep

    def counted(*args):
        ticks[0] += 1.0
        return real_sweep(*args)

    monkeypatch.setattr(pk, "sweep", counted)
    monkeypatch.setattr(sweep.time, "process_time", lambda: ticks[0])
    recorded = []
    monkeypatch.setattr(sweep, "_record_interpreted", lambda mech, n, cpu: recorded.append((n, cpu)))
    _, mech = motor()
    a0 = mech.q_init[mech.q_actuated]
    far = a0 + np.radians(95.0)  # ten coarse steps of 10 deg from the estimate's inputs: a route of its own
    res = sweep.solve_sweep(mech, far[None], mech.q_init)
    assert (res.status == 0).all()
    assert ticks[0] >= 2, "the route to the first input ran kernel sweeps of its own"
    assert recorded == [(1, 1.0)]
