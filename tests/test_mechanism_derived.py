"""Derived data (plans, planar steps, kernel model and pack) lives on the compiled mechanism.

* no module-level WeakKeyDictionary / WeakValueDictionary cache is left in linkcli/core;
* a sweep on a mechanism whose derived data is already built, on a fresh compile and on a
  pickled-and-unpickled copy gives bit-identical results (both sweep paths);
* pickling ships the fields only (same size as a fresh mechanism's pickle), the copy starts
  with no derived data and read-only arrays; ``dataclasses.replace`` starts a new, empty one.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import pickle
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from linkcli.compile import compile_mechanism
from linkcli.core import forward, sweep
from linkcli.io.loader import load_mechanism

REPO = Path(__file__).resolve().parent.parent
CORE = REPO / "linkcli" / "core"
FOURBAR = REPO / "mechanisms" / "fourbar.yaml"
HAVE_NUMBA = importlib.util.find_spec("numba") is not None and not os.environ.get("LINKCLI_NO_JIT")


def load(path):
    return compile_mechanism(load_mechanism(str(path)).model)


def test_no_module_level_weak_caches_in_core():
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in tree.body:  # module level only
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for sub in ast.walk(node.value):
                    name = sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name) else ""
                    if name in ("WeakKeyDictionary", "WeakValueDictionary"):
                        offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def _sweep(mech, compiled: bool):
    theta = np.radians(np.linspace(0.0, 360.0, 361))[:, None]
    run = sweep._solve_sweep_compiled if compiled else sweep._solve_sweep_interpreted
    return run(mech, theta, mech.q_init, 1e-10, np.radians(10.0))


def _assert_identical(a, b):
    for name in ("q", "status", "residual", "condition", "worst_loop"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert [(e.index, e.kind, e.loop) for e in a.events] == [(e.index, e.kind, e.loop) for e in b.events]


@pytest.mark.parametrize("compiled", [False, True], ids=["interpreted", "compiled"])
def test_results_identical_fresh_cached_and_unpickled(compiled):
    if compiled and not HAVE_NUMBA:
        pytest.skip("numba not installed")
    mech = load(FOURBAR)
    first = _sweep(mech, compiled)
    assert "forward.plan" in mech._derived and "loop_closure.plan" in mech._derived
    if compiled:
        assert "sweep.kernel_pack" in mech._derived
    _assert_identical(first, _sweep(mech, compiled))  # derived data reused
    _assert_identical(first, _sweep(load(FOURBAR), compiled))  # fresh compile
    _assert_identical(first, _sweep(pickle.loads(pickle.dumps(mech)), compiled))  # worker copy


def test_pickle_ships_fields_only():
    fresh = load(FOURBAR)
    used = load(FOURBAR)
    _sweep(used, False)
    sweep._planar_model(used)
    forward.planar_steps(used)
    assert len(used._derived) >= 4
    blob = pickle.dumps(used)
    assert len(blob) == len(pickle.dumps(fresh))  # no derived data in the pickle
    copy = pickle.loads(blob)
    assert copy._derived == {}
    assert not copy.q_init.flags.writeable and not copy.T_parent_joint.flags.writeable
    np.testing.assert_array_equal(copy.q_init, used.q_init)
    assert copy.joint_names == used.joint_names


def test_replace_starts_with_no_derived_data():
    mech = load(FOURBAR)
    _sweep(mech, False)
    other = replace(mech, q_init=np.array(mech.q_init))
    assert other._derived == {} and other._derived is not mech._derived
