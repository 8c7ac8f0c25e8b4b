"""Shared helpers of the dynamics tests (imported by the other test_dynamics_* modules), and a
smoke test: every test mechanism under tests/data/dynamics loads and simulates a few steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkcli.compile import compile_mechanism
from linkcli.core.dynamics import simulate
from linkcli.io.loader import load_mechanism, validate_document
from linkcli.io.yaml_source import read_yaml_file

DATA = Path(__file__).parent / "data" / "dynamics"


def load(name: str, overrides: dict | None = None):
    """Compile ``tests/data/dynamics/<name>``, top-level keys replaced by ``overrides``."""
    path = DATA / name
    if not overrides:
        return compile_mechanism(load_mechanism(path).model)
    data, smap = read_yaml_file(str(path))
    data.update(overrides)
    return compile_mechanism(validate_document(data, smap, str(path)).model)


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.yaml")))
def test_every_test_mechanism_simulates(name):
    mech = load(name)
    r = simulate(mech, mech.q_init, np.zeros(mech.n_q), t_end=0.01, dt=1e-3) if _assembled(mech) else None
    if r is not None:
        assert r.status == "ok", r.message
        assert r.constraint_residual.max() <= 1e-10
        assert r.q.shape == (11, mech.n_q) and r.link_pose.shape == (11, mech.n_links, 4, 4)


def _assembled(mech) -> bool:
    """True for the tree mechanisms (any q is assembled); the loops are tested elsewhere."""
    return mech.n_loops == 0
