"""Compiled or interpreted kernels for ``forces`` and ``--equilibrium`` (linkcli.core.jit's kernel
sets, linkcli.analyses.forces.plan_kernels): the plan follows the record as simulate's does, the
equilibrium (which runs no compiled kernel) never imports numba in ``auto`` mode, and both give
the same tables interpreted and compiled on the examples."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_jit_plan import fresh_process_state  # noqa: F401  (the fixture: a fresh process, record in tmp_path)

from linkcli.analyses.forces import ForcesRequest, forces_work_units, plan_kernels, run_equilibrium, run_forces
from linkcli.analyses.inputs import Sweep
from linkcli.compile import compile_mechanism
from linkcli.core import jit
from linkcli.io.loader import load_mechanism

REPO = Path(__file__).resolve().parent.parent
MOTOR = REPO / "mechanisms" / "motor_fourbar.yaml"


@pytest.fixture
def kernels_imported():
    """The kernel modules imported compiled, as the suite runs them (here, not at this file's top,
    so that the subprocess tests below see the analyses' own import order)."""
    import linkcli.core.kinetostatics  # noqa: F401


@pytest.fixture
def fresh(kernels_imported, fresh_process_state):  # noqa: F811
    """A fresh process's plan state (test_jit_plan.fresh_process_state) after the kernels were
    imported (a faked fresh process cannot import them: it never imports numba for real)."""
    return fresh_process_state


def motor():
    loaded = load_mechanism(MOTOR)
    return loaded, compile_mechanism(loaded.model)


# --- the declaration ---------------------------------------------------------------------------------
def test_every_kernel_set_names_existing_modules_and_positive_costs():
    for name, kset in jit.KERNEL_SETS.items():
        for module in kset.modules:
            assert (REPO / "linkcli" / "core" / module).is_file(), (name, module)
        assert kset.seconds_per_unit > 0 and kset.compile_s > 0 and kset.size_exponent > 0
        assert jit.DEFAULT_COMPILE_S[name] == kset.compile_s and jit.KERNEL_MODULES[name] == kset.modules


def test_forces_work_units_are_points_times_bodies():
    """Measured: the interpreted kernels cost 0.10-0.11 ms per point and body on planar chains of 3
    to 41 bodies (linear in the bodies, benchmarks/README.md)."""
    _, mech = motor()
    assert forces_work_units(mech, 73) == pytest.approx(73 * 3)  # crank, coupler, rocker
    assert forces_work_units(mech, 0) == 0.0
    assert jit.KERNEL_SETS["forces"].work_units(10, 41) == pytest.approx(410.0)
    # the example's 73 points project about 0.03 s interpreted: far below a compile and below
    # the cost of loading cached kernels
    projected = forces_work_units(mech, 73) * jit.KERNEL_SETS["forces"].seconds_per_unit
    assert jit.excess_cost(projected) == 0.0


#: the cache checks as they are (the fixtures replace them)
REAL_CACHE_CHECKS = {"kernels_cached": jit.kernels_cached, "kernels_partly_cached": jit.kernels_partly_cached}

#: a fresh process imports one kernel set's modules with interpreted kernels and prints the kernel
#: modules (those decorating with maybe_njit) it imported, as paths under linkcli/core (argv: the set)
IMPORTS_CHILD = """
import importlib, json, sys
from pathlib import Path
from linkcli.core import jit
core = Path(jit.__file__).parent
for m in jit.KERNEL_SETS[sys.argv[1]].modules:
    if not m.endswith("structs_generated.py"):  # numba's record types: imported only when compiling
        importlib.import_module("linkcli.core." + m[:-3].replace("/", "."))
found = [str(Path(mod.__file__).relative_to(core)) for name, mod in list(sys.modules.items())
         if name.startswith("linkcli.core.") and getattr(mod, "__file__", None)
         and name != "linkcli.core.jit" and "@maybe_njit" in Path(mod.__file__).read_text(encoding="utf-8")]
print(json.dumps(sorted(found)))
"""


@pytest.mark.parametrize("kernel_set", list(jit.KERNEL_SETS))
def test_every_kernel_module_a_set_imports_is_declared_its_own_or_shared(kernel_set):
    """A cold run's CPU is recorded as the set's compile cost only when none of the modules it
    compiles is cached (jit.py docstring); that check is only as good as the declared lists.
    The kernel modules a set's modules import (with the dynamics package's runner imported lazily)
    must all be declared (forces on a fresh cache left index files of exactly those modules and
    structs_generated, measured 1 Dec 2026)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "LINKCLI_JIT": "never"}
    out = subprocess.run([sys.executable, "-c", IMPORTS_CHILD, kernel_set], env=env, cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    kset = jit.KERNEL_SETS[kernel_set]
    undeclared = set(json.loads(out.stdout)) - set(kset.modules) - set(kset.shared)
    assert not undeclared, undeclared
    for module in kset.shared:
        assert (REPO / "linkcli" / "core" / module).is_file(), module


def test_a_partial_compile_keeps_the_learned_compile_cost(fresh, monkeypatch, tmp_path):
    """simulate and forces share the dynamics kernels: with simulate's cached, a cold forces run
    compiles only the rest (1-2 s of CPU instead of ~13). Recording that as the compile cost made
    the next fresh cache (an upgrade, a new venv) compile at once for a run projected at 3 s and
    pay the whole compile, ~4x the 2x bound of the rule. The partial run keeps the learned figure."""
    for name, check in REAL_CACHE_CHECKS.items():
        monkeypatch.setattr(jit, name, check)
    cache = tmp_path / "numba"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    record = tmp_path / "sub" / "record.json"
    kset = jit.KERNEL_SETS["forces"]
    big = kset.work_units(200_000, 3)  # ~70 s projected interpreted: compiles at once

    p = jit.plan_kernels("forces", big)  # an empty cache: the whole set compiles
    assert p.compile and p.cold and not p.partial
    jit.record_run("forces", p, big, 14.0)
    learned = json.loads(record.read_text())["forces"]["compile_s"]
    assert learned == pytest.approx(14.0 - jit.COMPILED_LOAD_S - big * kset.seconds_per_unit / jit.COMPILED_SPEEDUP)

    shutil.rmtree(cache)  # a new cache where simulate compiled first: the shared modules are cached
    for module in jit.KERNEL_SETS["simulate"].modules + jit.KERNEL_SETS["simulate"].shared:
        stem = Path(module).stem
        (cache / "dynamics_0" / f"{stem}.kernel-10.py311.nbi").parent.mkdir(parents=True, exist_ok=True)
        (cache / "dynamics_0" / f"{stem}.kernel-10.py311.nbi").write_text("")
    monkeypatch.setattr(jit, "_numba", None)
    fresh.clear()
    p = jit.plan_kernels("forces", big)
    assert p.compile and p.cold and p.partial  # no kinetostatics index file: cold, but only partly
    jit.record_run("forces", p, big, 1.6)  # compiled only kinetostatics' own kernels
    e = json.loads(record.read_text())["forces"]
    assert e["compile_s"] == learned and e["rent_paid_s"] == 0.0

    shutil.rmtree(cache)  # an upgrade: every cache empty again
    monkeypatch.setattr(jit, "_numba", None)
    fresh.clear()
    p = jit.plan_kernels("forces", 3.0 / kset.seconds_per_unit)  # 3 s projected: far below a compile
    assert not p.compile and p.cold and fresh["compile"] is False


# --- the plan follows the record ---------------------------------------------------------------------
def test_a_forces_run_projected_longer_than_a_compile_compiles_at_once(fresh_process_state,  # noqa: F811
                                                                        monkeypatch):
    """(The record's learning, rent and compile cost per set: test_jit_plan.py, parametrised over
    the kernel sets.)"""
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: False)
    kset = jit.KERNEL_SETS["forces"]
    p = jit.plan_kernels("forces", kset.work_units(200_000, 3))  # 200,000 points of a four-bar: ~70 s
    assert p.compile and p.cold and p.compile_s == kset.compile_s and fresh_process_state["compile"] is True


def test_a_long_forces_run_compiles_at_once_and_a_cached_short_one_is_interpreted(fresh_process_state,  # noqa: F811
                                                                                   monkeypatch):
    _, mech = motor()
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: False)
    long = ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 6.28, None, 200_000)])  # ~70 s projected
    assert plan_kernels(mech, long).compile
    monkeypatch.setattr(jit, "_numba", None)
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: True)
    short = ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 6.28, None, 73)])
    p = plan_kernels(mech, short)
    assert not p.compile and not p.cold  # loading numba would cost more than the 0.03 s it saves
    monkeypatch.setattr(jit, "_numba", None)
    assert plan_kernels(mech, short, many=True).compile  # a batch worker loads them once for many runs


def test_run_forces_plans_before_the_kernels_and_records_their_cpu(fresh, monkeypatch, tmp_path):
    loaded, mech = motor()
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: False)
    out = run_forces(mech, ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 6.0, None, 25)]), loaded)
    assert out.n_failed == 0 and fresh["compile"] is False
    e = json.loads((tmp_path / "sub" / "record.json").read_text())["forces"]
    assert e["runs"] == 1
    fr = out.result
    assert fr.kernel_points == 25 and fr.kernel_cpu_s > 0
    assert e["seconds_per_unit"] == pytest.approx(fr.kernel_cpu_s / forces_work_units(mech, 25))


def test_the_equilibrium_runs_no_kernel_and_fixes_interpreted_in_auto(fresh, monkeypatch, tmp_path):
    loaded, mech = motor()
    for mode, compiled in (("auto", False), ("never", False), ("always", True)):
        monkeypatch.setattr(jit, "_numba", None)
        fresh.clear()
        monkeypatch.setenv("LINKCLI_JIT", mode)
        p = plan_kernels(mech, ForcesRequest(), equilibrium=True)
        assert p.compile is compiled and fresh["compile"] is compiled and p.compile_s == 0.0
    monkeypatch.setattr(jit, "_numba", None)
    fresh.clear()
    monkeypatch.setenv("LINKCLI_JIT", "auto")
    out = run_equilibrium(mech, ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 6.28, None, 73)]), loaded)
    assert out.n_cases == 4 and fresh["compile"] is False
    record = tmp_path / "sub" / "record.json"  # nothing to learn about forces' kernels: none ran (the
    assert "forces" not in (json.loads(record.read_text()) if record.exists() else {})  # sweep's may learn)


def test_a_bad_mode_is_a_clear_error_for_the_plan(monkeypatch):
    from linkcli.errors import AnalysisInputError

    _, mech = motor()
    monkeypatch.setattr(jit, "_numba", None)
    monkeypatch.setenv("LINKCLI_JIT", "sometimes")
    for equilibrium in (False, True):
        with pytest.raises(AnalysisInputError, match="LINKCLI_JIT='sometimes'"):
            plan_kernels(mech, ForcesRequest(), equilibrium=equilibrium)


def test_a_compiling_forces_run_says_so_once(run_cli, monkeypatch):
    from linkcli.analyses import forces as analysis

    monkeypatch.setattr(analysis, "plan_kernels", lambda mech, req, equilibrium=False, many=False:
                        jit.Plan(True, True, "test", 1.0, 13.2))
    res = run_cli("forces", MOTOR, "-f", "csv")
    assert res.exit_code == 0, res.stderr
    assert res.stderr.count("compiling kernels once, about 13 s of CPU; later runs start at once") == 1


def test_first_forces_and_equilibrium_runs_compile_nothing(tmp_path):
    """A fresh install (empty numba cache and record), auto mode, as a user runs the commands:
    forces runs its kernels interpreted and learns their cost; the equilibrium runs none (both
    learn their short sweep's interpreted cost, kernel set "sweep") (before these commands
    planned, the first forces compiled for ~14 s of CPU and the equilibrium compiled the two
    signature-typed helpers at import)."""
    pytest.importorskip("numba")
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "LINKCLI_JIT_RECORD": str(tmp_path / "record.json"), "LINKCLI_JIT": "auto"}
    env.pop("LINKCLI_NO_JIT", None)
    for i, extra in enumerate(([], ["--equilibrium"], ["-q"], ["--equilibrium", "-q"])):  # -q plans the same way
        out = subprocess.run([sys.executable, "-m", "linkcli", "forces", *extra, str(MOTOR), "-o",
                              str(tmp_path / "out.csv")], env=env, cwd=REPO, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        assert "compiling" not in out.stderr
        assert not list((tmp_path / "numba").rglob("*.nbi")), extra  # nothing compiled
        record = json.loads((tmp_path / "record.json").read_text())
        runs = 1 + ("-q" in extra)  # one forces run per pass; the equilibrium adds nothing to it
        assert sorted(record) == ["forces", "sweep"] and record["forces"]["runs"] == runs, extra
        # every pass's sweep (73 points) ran interpreted and adds its rent to the sweep kernel set
        assert record["sweep"]["runs"] == i + 1, extra


#: a fresh process runs one analysis through the Python API (argv: forces|equilibrium, the file) and
#: reports which kernel modules were imported when the plan was made, and whether numba got imported
API_CHILD = """
import json, sys
from linkcli.analyses.forces import request_from_defaults, run_equilibrium, run_forces
from linkcli.compile import compile_mechanism
from linkcli.core import jit
from linkcli.io.loader import load_mechanism
seen = {}
def spy(real):
    def planned(*args, **kwargs):
        seen.setdefault("at_plan", sorted(m for m in sys.modules if m.startswith("linkcli.core.dynamics")
                                          or m in ("linkcli.core.kinetostatics", "numba")))
        return real(*args, **kwargs)
    return planned
jit.plan_kernels, jit.plan_without_kernels = spy(jit.plan_kernels), spy(jit.plan_without_kernels)
loaded = load_mechanism(sys.argv[2])
mech = compile_mechanism(loaded.model)
run = run_forces if sys.argv[1] == "forces" else run_equilibrium
out = run(mech, request_from_defaults(loaded.model), loaded)
print(json.dumps({**seen, "numba": "numba" in sys.modules, "rows": out.n_cases}))
"""


@pytest.mark.parametrize("analysis", ["forces", "equilibrium"])
def test_the_python_api_plans_before_importing_any_kernel_module(tmp_path, analysis):
    """run_forces / run_equilibrium called from Python in a fresh process (auto mode, empty numba
    cache): the plan is made before kinetostatics or the dynamics package is imported (importing
    them first fixed the process to compiled kernels: 40 index files and ~13 s of CPU for a
    73-point forces run), nothing is compiled, and the equilibrium never imports numba."""
    pytest.importorskip("numba")
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "LINKCLI_JIT_RECORD": str(tmp_path / "record.json"), "LINKCLI_JIT": "auto"}
    env.pop("LINKCLI_NO_JIT", None)
    out = subprocess.run([sys.executable, "-c", API_CHILD, analysis, str(MOTOR)], env=env, cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["at_plan"] == [] and report["rows"] > 0
    assert not list((tmp_path / "numba").rglob("*.nbi"))
    if analysis == "equilibrium":
        assert report["numba"] is False

# --- interpreted = compiled ----------------------------------------------------------------------------
#: examples whose equilibrium search takes seconds (it runs no kernel: nothing to compare)
SLOW_EQUILIBRIA = ("puma560", "shaker_pendulum")
#: a child process with interpreted kernels writes both analyses' tables of every example (argv:
#: the slow equilibria, the files)
CHILD = """
import json, sys
from pathlib import Path
from linkcli.analyses.forces import request_from_defaults, run_equilibrium, run_forces
from linkcli.compile import compile_mechanism
from linkcli.core import jit
from linkcli.errors import AnalysisInputError
from linkcli.io.loader import load_mechanism
out = {}
SLOW = sys.argv[1].split(",")
for path in sys.argv[2:]:
    loaded = load_mechanism(path)
    mech = compile_mechanism(loaded.model)
    for name, run in (("forces", run_forces), ("equilibrium", run_equilibrium)):
        if name == "equilibrium" and Path(path).stem in SLOW:
            continue
        try:
            t = run(mech, request_from_defaults(loaded.model), loaded).table
            out[f"{Path(path).stem}/{name}"] = {h: [str(v) for v in t[h]] for h in t.headers()}
        except AnalysisInputError as exc:
            out[f"{Path(path).stem}/{name}"] = str(exc)
out["jit"] = jit.jit_enabled()
print(json.dumps(out))
"""


def test_forces_and_equilibrium_interpreted_match_compiled_on_every_example(tmp_path):
    """The same arithmetic (the kernels are plain Python that numba compiles): every number of
    every forces and equilibrium table of the examples agrees to 1e-9 of its column's largest
    value (measured on 1 Dec 2026: bit-identical, difference 0, on all 25 tables compared; the tolerance
    leaves room for a compiler that contracts a*b+c into one fused operation). The equilibrium
    runs no kernel, so its tables only check that the plan changes nothing; the two slowest
    searches (puma560: 24 s, shaker_pendulum: 3 s of Newton in Python) are left out."""
    pytest.importorskip("numba")
    files = sorted(str(p) for p in (REPO / "mechanisms").glob("*.yaml"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "LINKCLI_JIT": "never",
           "LINKCLI_JIT_RECORD": str(tmp_path / "record.json")}
    child = subprocess.run([sys.executable, "-c", CHILD, ",".join(SLOW_EQUILIBRIA), *files], env=env, cwd=REPO,
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr
    interpreted = json.loads(child.stdout)
    assert interpreted.pop("jit") is False
    assert jit.jit_enabled()  # this process: the suite runs compiled kernels (conftest)
    from linkcli.analyses.forces import request_from_defaults
    from linkcli.errors import AnalysisInputError

    compared, worst = 0, 0.0
    for path in files:
        loaded = load_mechanism(path)
        mech = compile_mechanism(loaded.model)
        for name, run in (("forces", run_forces), ("equilibrium", run_equilibrium)):
            if name == "equilibrium" and Path(path).stem in SLOW_EQUILIBRIA:
                continue
            want = interpreted[f"{Path(path).stem}/{name}"]
            try:
                table = run(mech, request_from_defaults(loaded.model), loaded).table
            except AnalysisInputError as exc:
                assert want == str(exc)
                continue
            got = {h: table[h] for h in table.headers()}
            assert list(got) == list(want), (path, name)
            for key, values in got.items():
                if values.dtype.kind in "fc":
                    a = np.asarray(want[key], dtype=float)
                    b = np.asarray(values, dtype=float)
                    assert np.array_equal(np.isnan(a), np.isnan(b)), (path, name, key)
                    fin = np.isfinite(a)
                    scale = max(np.abs(b[fin]).max(initial=0.0), 1e-300)
                    err = np.abs(a[fin] - b[fin]).max(initial=0.0) / scale
                    worst = max(worst, err)
                    assert err <= 1e-9, (path, name, key, err)
                else:
                    assert [str(v) for v in values] == want[key], (path, name, key)
            compared += 1
    assert compared >= 20  # most examples have actuated inputs and run both analyses
    print(f"largest relative difference interpreted vs compiled: {worst:.3g} over {compared} tables")
