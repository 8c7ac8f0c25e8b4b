"""When kernels are compiled (linkcli.core.jit): the "ski rental" decision as a pure function, its
competitive bound checked against the best choice in hindsight, the record it learns from, and
the wiring (LINKCLI_JIT, the compile announcement, ``linkcli compile``, interpreted = compiled)."""

from __future__ import annotations

import csv
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from linkcli.core import jit

REPO = Path(__file__).resolve().parent.parent
C = 36.0  # a compile cost (s), the measured order of magnitude


def plan(mode="auto", numba_ok=True, cached=False, projected=1.0, rent=0.0, compile_s=C):
    return jit.decide(mode, numba_ok=numba_ok, cached=cached, projected_s=projected, rent_paid_s=rent,
                      compile_s=compile_s)


# --- the decision --------------------------------------------------------------------------------------
def test_a_short_run_on_a_cold_cache_is_interpreted():
    p = plan(projected=5.0)
    assert not p.compile and p.cold


def test_interpreted_time_beyond_the_compile_cost_compiles():
    assert not plan(projected=5.0, rent=C - 5.0).compile  # its excess (5 - 0.6 - 5/30) keeps it below C
    p = plan(projected=5.0, rent=C - 1.0)
    assert p.compile and p.cold and p.compile_s == C


def test_a_large_projected_run_compiles_at_once():
    assert plan(projected=10 * C).compile
    assert plan(projected=C + jit.COMPILED_LOAD_S + C / jit.COMPILED_SPEEDUP + 1.0).compile


def test_a_warm_cache_is_used_when_the_run_costs_more_than_loading_it():
    for projected, rent in itertools.product([0.0, 0.01, 0.6, 0.7, 5.0, 1e4], [0.0, 10.0, 1e3]):
        p = plan(cached=True, projected=projected, rent=rent)
        assert not p.cold and p.compile_s == 0.0
        # cached kernels cost COMPILED_LOAD_S + projected / COMPILED_SPEEDUP (0.62 s for 0.64 s interpreted)
        assert p.compile == (projected > jit.COMPILED_LOAD_S / (1 - 1 / jit.COMPILED_SPEEDUP))
        # a batch worker (many runs) always loads them
        many = jit.decide("auto", numba_ok=True, cached=True, projected_s=projected, rent_paid_s=rent, compile_s=C,
                          many=True)
        assert many.compile and not many.cold


def test_modes_and_missing_numba_win_over_everything():
    for cached, projected, rent in itertools.product([False, True], [0.0, 5.0, 1e4], [0.0, 1e3]):
        assert not plan("never", cached=cached, projected=projected, rent=rent).compile
        assert not plan(numba_ok=False, cached=cached, projected=projected, rent=rent).compile
        p = plan("always", cached=cached, projected=projected, rent=rent)
        assert p.compile and p.cold == (not cached)


def test_many_runs_in_one_process_compile_on_a_cold_cache():
    """A batch worker cannot switch to compiled kernels after interpreting its first job."""
    for projected, rent in itertools.product([0.0, 0.01, 5.0], [0.0, 10.0]):
        p = jit.decide("auto", numba_ok=True, cached=False, projected_s=projected, rent_paid_s=rent, compile_s=C,
                       many=True)
        assert p.compile and p.cold and p.compile_s == C
        assert not jit.decide("never", numba_ok=True, cached=False, projected_s=projected, rent_paid_s=rent,
                              compile_s=C, many=True).compile
        assert not jit.decide("auto", numba_ok=False, cached=False, projected_s=projected, rent_paid_s=rent,
                              compile_s=C, many=True).compile
        assert not jit.decide("auto", numba_ok=True, cached=True, projected_s=projected, rent_paid_s=rent,
                              compile_s=C, many=True).cold


def test_the_rule_exhaustively_on_a_grid():
    """auto on a cold cache compiles exactly when the rent paid plus this run's excess reach C."""
    for projected, rent, compile_s in itertools.product(np.linspace(0, 80, 41), np.linspace(0, 80, 41), [1.0, C, 60]):
        expected = rent + max(0.0, projected * (1 - 1 / jit.COMPILED_SPEEDUP) - jit.COMPILED_LOAD_S) >= compile_s
        assert plan(projected=projected, rent=rent, compile_s=compile_s).compile == expected


def test_excess_cost_is_what_interpreting_costs_beyond_cached_kernels():
    assert jit.excess_cost(0.0) == 0.0 and jit.excess_cost(0.3) == 0.0  # cheaper than loading numba
    i = 10.0
    assert jit.excess_cost(i) == pytest.approx(i - (jit.COMPILED_LOAD_S + i / jit.COMPILED_SPEEDUP), rel=1e-15)


def total_cpu(costs, compile_s, policy) -> float:
    """CPU of a sequence of runs with interpreted costs ``costs``: a run with cached kernels costs
    LOAD + I / SPEEDUP, the run that compiles that plus ``compile_s``; ``policy(k, rent)`` says
    whether run k (cold cache) compiles."""
    total, rent, cached = 0.0, 0.0, False
    for k, i in enumerate(costs):
        warm = jit.COMPILED_LOAD_S + i / jit.COMPILED_SPEEDUP
        if cached:
            total += warm
        elif policy(k, rent, i):
            total += compile_s + warm
            cached = True
        else:
            total += i
            rent += jit.excess_cost(i)
    return total


def test_total_cpu_is_within_twice_the_best_choice_in_hindsight():
    """The ski-rental bound of decide's docstring, on random sequences of runs (exact projections):
    against every fixed choice (compile before run k, or never), the best one known in hindsight."""
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(400):
        n = int(rng.integers(1, 40))
        costs = rng.lognormal(mean=rng.uniform(-2, 4), sigma=1.5, size=n)  # 0.01 s .. minutes per run
        compile_s = float(rng.uniform(5, 80))
        alg = total_cpu(costs, compile_s,
                        lambda k, rent, i, c=compile_s: plan(projected=i, rent=rent, compile_s=c).compile)
        hindsight = min(total_cpu(costs, compile_s, lambda k, rent, i, j=j: k >= j) for j in range(n + 1))
        assert alg <= 2.0 * hindsight * (1 + 1e-12)
        worst = max(worst, alg / hindsight)
    assert worst > 1.2  # the sequences include ones where the online rule pays for not knowing the future


def test_projected_sizes_compile_or_not_as_they_should():
    """With the measured default cost per unit: the example motor four-bar (3 bodies, 2000 steps,
    every step saved) is interpreted on a cold cache; the 81-body chain for 20 s at dt 1e-3 and a
    10^5-step run of the four-bar compile at once."""
    rate = jit.DEFAULT_SECONDS_PER_UNIT
    c = jit.DEFAULT_COMPILE_S["simulate"]
    motor = rate * jit.work_units(2000, 2001, 3)
    assert 1.0 < motor < 15.0  # measured 4.6 s interpreted (benchmarks/README.md)
    assert not plan(projected=motor, compile_s=c).compile
    assert plan(projected=rate * jit.work_units(20_000, 201, 81), compile_s=c).compile
    assert plan(projected=rate * jit.work_units(100_000, 100_001, 3), compile_s=c).compile
    assert plan(projected=rate * jit.work_units(100_000, 1_001, 3), compile_s=c).compile  # saving every 100th


def test_work_units_grow_with_steps_samples_and_bodies():
    assert jit.work_units(10, 11, 1) == 21.0
    assert jit.work_units(10, 11, 4) == pytest.approx(21 * 4**jit.SIZE_EXPONENT)
    assert jit.work_units(10, 11, 0) == 21.0  # no bodies: still the steps' bookkeeping


def test_requested_mode(monkeypatch):
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.delenv("LINKCLI_JIT", raising=False)
    assert jit.requested_mode() == "auto"
    for mode in ("auto", "always", "never", " Always "):
        monkeypatch.setenv("LINKCLI_JIT", mode)
        assert jit.requested_mode() == mode.strip().lower()
    monkeypatch.setenv("LINKCLI_NO_JIT", "1")  # the old switch still means never, and wins
    monkeypatch.setenv("LINKCLI_JIT", "always")
    assert jit.requested_mode() == "never"
    monkeypatch.delenv("LINKCLI_NO_JIT")
    monkeypatch.setenv("LINKCLI_JIT", "fast")
    with pytest.raises(ValueError, match="LINKCLI_JIT='fast': expected one of auto, always, never"):
        jit.requested_mode()


# --- the record ----------------------------------------------------------------------------------------
@pytest.fixture
def fresh_process_state(monkeypatch, tmp_path):
    """plan_kernels/record_run as in a fresh process (mode not fixed), numba never imported for
    real, the record in tmp_path."""
    fixed = {}
    monkeypatch.setattr(jit, "_numba", None)
    monkeypatch.setattr(jit, "_set_compiling", lambda compile_kernels: fixed.setdefault("compile", compile_kernels))
    monkeypatch.setattr(jit, "numba_available", lambda: True)
    monkeypatch.setenv("LINKCLI_JIT", "auto")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "sub" / "record.json"))
    # a cold set is cold for every module it compiles, whatever this developer's cache holds
    # (partial compiles: test_jit_forces.py)
    monkeypatch.setattr(jit, "kernels_partly_cached", lambda kernel_set: False)
    return fixed


@pytest.mark.parametrize("kernel_set", list(jit.KERNEL_SETS))
def test_the_record_learns_interpreted_costs_and_compiles_when_they_add_up(fresh_process_state, monkeypatch,
                                                                           tmp_path, kernel_set):
    """Every kernel set (simulate, forces) follows its own entry of the record."""
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: False)
    units = 1000.0
    p = jit.plan_kernels(kernel_set, units)
    assert not p.compile and fresh_process_state["compile"] is False
    assert p.projected_s == pytest.approx(units * jit.KERNEL_SETS[kernel_set].seconds_per_unit)
    jit.record_run(kernel_set, p, units, 8.0)  # measured 8 s: 8e-3 s per unit on this machine
    record = json.loads((tmp_path / "sub" / "record.json").read_text())
    assert list(record) == [kernel_set]  # the other sets' entries are theirs
    e = record[kernel_set]
    assert e["runs"] == 1 and e["seconds_per_unit"] == pytest.approx(8e-3)
    assert e["rent_paid_s"] == pytest.approx(jit.excess_cost(8.0))
    # the next run projects with the learned rate; runs add up until they reach the compile cost
    n_interpreted = 1
    while True:
        monkeypatch.setattr(jit, "_numba", None)
        fresh_process_state.clear()
        p = jit.plan_kernels(kernel_set, units)
        if p.compile:
            break
        assert p.projected_s == pytest.approx(8.0)
        jit.record_run(kernel_set, p, units, 8.0)
        n_interpreted += 1
    paid = n_interpreted * jit.excess_cost(8.0)
    assert paid < jit.DEFAULT_COMPILE_S[kernel_set] <= paid + jit.excess_cost(8.0)
    assert p.cold and fresh_process_state["compile"] is True
    # the compiling run records this machine's compile cost and starts the rent afresh
    jit.record_run(kernel_set, p, units, 50.0)
    e = json.loads((tmp_path / "sub" / "record.json").read_text())[kernel_set]
    assert e["rent_paid_s"] == 0.0
    assert e["compile_s"] == pytest.approx(50.0 - jit.COMPILED_LOAD_S - 8.0 / jit.COMPILED_SPEEDUP)


def test_a_cached_run_changes_nothing_and_a_bad_record_means_defaults(fresh_process_state, monkeypatch, tmp_path):
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: True)
    path = tmp_path / "sub" / "record.json"
    path.parent.mkdir()
    path.write_text('{"simulate": {"compile_s": -3, "seconds_per_unit": "x", "rent_paid_s": NaN}}')
    p = jit.plan_kernels("simulate", 1e4)  # 3 s projected: worth loading the cached kernels
    assert p.compile and not p.cold
    assert p.projected_s == pytest.approx(1e4 * jit.DEFAULT_SECONDS_PER_UNIT)
    before = path.read_text()
    jit.record_run("simulate", p, 1e4, 1.0)
    assert path.read_text() == before
    path.write_text("not json")
    assert jit.read_record() == {}


def test_an_unwritable_record_is_not_an_error(fresh_process_state, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(blocker / "record.json"))  # parent is a file
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: False)
    p = jit.plan_kernels("simulate", 10.0)
    jit.record_run("simulate", p, 10.0, 1.0)
    assert jit.read_record() == {}


def test_a_record_that_cannot_be_replaced_leaves_no_temporary_file(monkeypatch, tmp_path):
    """The record's path is a directory: os.replace fails after the temporary file was written;
    the failure stays silent (best effort) but the temporary file is removed, not left behind
    at every run."""
    (tmp_path / "record.json").mkdir()
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    jit._write_record({"simulate": {"runs": 1}})
    jit._write_record({"simulate": {"runs": 2}})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_a_fixed_process_mode_is_followed(monkeypatch, tmp_path):
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    monkeypatch.setattr(jit, "_numba", False)  # kernels imported interpreted earlier in this process
    monkeypatch.setattr(jit, "kernels_cached", lambda kernel_set: False)
    p = jit.plan_kernels("simulate", 1e9)
    assert not p.compile and "earlier in this process" in p.reason
    assert not jit.compiled_kernels_possible() and not jit.require_compiled()


def test_the_suite_never_writes_the_record_outside_a_temporary_directory():
    record = Path(jit.record_path()).resolve()
    assert record.is_relative_to(Path(tempfile.gettempdir()).resolve())
    assert os.environ["LINKCLI_JIT"] == "always"  # the suite exercises the compiled path (conftest)


# --- wiring ----------------------------------------------------------------------------------------------
def test_a_bad_mode_is_a_clear_error(run_cli, monkeypatch):
    monkeypatch.setenv("LINKCLI_JIT", "sometimes")
    res = run_cli("simulate", REPO / "mechanisms" / "motor_fourbar.yaml", "--t-end", "0.01")
    assert res.exit_code == 2
    assert "LINKCLI_JIT='sometimes': expected one of auto, always, never" in res.stderr


def test_a_compiling_run_says_so_once(run_cli, monkeypatch):
    from linkcli.analyses import simulate as analysis

    monkeypatch.setattr(analysis, "plan_kernels", lambda mech, req, many=False: jit.Plan(True, True, "test", 1.0, 36.4))
    res = run_cli("simulate", REPO / "mechanisms" / "motor_fourbar.yaml", "--t-end", "0.01", "-f", "csv")
    assert res.exit_code == 0, res.stderr
    assert res.stderr.count("compiling kernels once, about 36 s of CPU; later runs start at once") == 1


def _cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
            "LINKCLI_JIT_RECORD": str(tmp_path / "record.json"), **env}
    full.pop("LINKCLI_NO_JIT", None)
    return subprocess.run([sys.executable, "-m", "linkcli", *args], env=full, cwd=REPO, capture_output=True,
                          text=True, timeout=300)


def test_a_first_short_run_is_interpreted_and_matches_the_compiled_run(tmp_path, run_cli):
    """A fresh install (empty numba cache and record), auto mode: the short run is interpreted,
    learns its cost, and writes the rows the compiled kernels write (to round-off: the same
    arithmetic, only numba's fused and reordered floating-point operations differ)."""
    pytest.importorskip("numba")
    fourbar = REPO / "mechanisms" / "motor_fourbar.yaml"
    out = _cli(tmp_path, "simulate", str(fourbar), "--t-end", "0.05", "-o", str(tmp_path / "auto.csv"),
               LINKCLI_JIT="auto")
    assert out.returncode == 0, out.stderr
    assert "compiling" not in out.stderr
    assert not list((tmp_path / "numba").rglob("*.nbi"))  # nothing compiled
    e = json.loads((tmp_path / "record.json").read_text())["simulate"]
    assert e["runs"] == 1 and e["seconds_per_unit"] > 0
    compiled = run_cli("simulate", fourbar, "--t-end", "0.05", "-o", tmp_path / "compiled.csv")  # suite: always
    assert compiled.exit_code == 0, compiled.stderr
    a, b = (list(csv.reader(open(tmp_path / n, encoding="utf-8"))) for n in ("auto.csv", "compiled.csv"))
    assert a[0] == b[0] and len(a) == len(b) == 52  # header and t = 0, 0.001 .. 0.05
    x, y = (np.array(t[1:], dtype=float) for t in (a, b))
    # energies and reactions carry ~1e3 N and J; 1e-9 relative to each column's scale is round-off
    scale = np.maximum(np.abs(y).max(axis=0), 1.0)
    assert np.all(np.abs(x - y) <= 1e-9 * scale)


def test_compile_command_refuses_without_compilation(tmp_path):
    out = _cli(tmp_path, "compile", LINKCLI_JIT="never")
    assert out.returncode == 1
    assert "cannot compile kernels: kernels run as Python here" in out.stderr


def test_compile_command_compiles_or_loads_and_reports_cpu(run_cli):
    pytest.importorskip("numba")
    res = run_cli("compile")
    assert res.exit_code == 0, res.stderr
    assert "s of CPU" in res.stderr and "kernels " in res.stderr
    # the cache test of the plan sees what a compiled run leaves (numba's index files per module)
    for kernel_set in jit.KERNEL_SETS:
        for module in jit.KERNEL_MODULES[kernel_set]:
            assert (REPO / "linkcli" / "core" / module).is_file()
        assert jit.kernels_cached(kernel_set), kernel_set


@pytest.mark.parametrize("command", [["solve"], ["forces"], ["batch"], ["compile"]])
def test_a_bad_linkcli_jit_is_an_error_for_every_command(monkeypatch, command):
    """``LINKCLI_JIT=bogus`` is a usage error naming the variable for every command, not only
    simulate: solve (whose sweep kernel follows the same mode) used to run silently as ``auto``."""
    from typer.testing import CliRunner

    from linkcli.cli.app import app

    monkeypatch.setenv("LINKCLI_JIT", "bogus")
    fourbar = str(Path(__file__).parents[1] / "mechanisms" / "fourbar.yaml")
    args = command if command == ["compile"] else [*command, fourbar]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "LINKCLI_JIT='bogus': expected one of auto, always, never" in res.output


def test_an_unusable_numba_cache_dir_falls_back_like_numba(tmp_path, monkeypatch):
    """numba caches beside the sources (or in its per-user directory) when NUMBA_CACHE_DIR cannot
    be used (here: a path under a regular file); the cache check must look where numba does, or
    every run would look uncached (and announce a compile) for ever."""
    from linkcli.core.jit import numba_cache_exists

    package = tmp_path / "pkg"
    (package / "__pycache__").mkdir(parents=True)
    module = package / "kernels.py"
    module.write_text("")
    (package / "__pycache__" / "kernels.step-10.py311.nbi").write_text("")
    blocker = tmp_path / "afile"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocker / "cache"))
    assert numba_cache_exists(str(module), "kernels.*.nbi")
    assert not numba_cache_exists(str(module), "other.*.nbi")
    usable = tmp_path / "numba-cache"  # a usable NUMBA_CACHE_DIR is the only place numba uses
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(usable))
    assert not numba_cache_exists(str(module), "kernels.*.nbi")
    (usable / "pkg").mkdir(parents=True)
    (usable / "pkg" / "kernels.step-10.py311.nbi").write_text("")
    assert numba_cache_exists(str(module), "kernels.*.nbi")
