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


def planar_balance_residuals(mech, r, driver_torques=()):
    """A hand Newton-Euler balance of every moving link of a planar simulation ``r``, independent
    of the dynamics code: the reported joint reactions (on the child about its joint-frame origin,
    the opposite on the parent), ``driver_torques`` ``[(joint index, torque (n_saved,) N m)]``
    (about z, plus on the child, minus on the parent), and the weights; accelerations of the CGs
    and angular accelerations by central differences of the saved motion. Returns the force and
    moment residuals ``F - m a`` (n, n_links - 1, 3) and ``M - Izz alpha`` (n, n_links - 1) at the
    inner rows (two neighbours each side), and the summed forces and moments (every row, all links)
    to scale them."""
    T = r.link_pose
    cg = np.einsum("slij,lj->sli", T[..., :3, :3], mech.link_cg) + T[..., :3, 3]
    angle = np.unwrap(np.arctan2(T[..., 1, 0], T[..., 0, 0]), axis=0)
    acc = np.gradient(np.gradient(cg, r.t, axis=0), r.t, axis=0)
    alpha = np.gradient(np.gradient(angle, r.t, axis=0), r.t, axis=0)
    force = np.zeros_like(cg) + mech.link_mass[None, :, None] * mech.gravity
    moment = np.zeros(cg.shape[:2])
    for j in range(mech.n_joints):
        c, p = mech.joint_child[j], mech.joint_parent[j]
        o = (T[:, c] @ mech.T_child_joint[j])[:, :3, 3]  # the child's joint origin (moment reference)
        F, M = r.reaction_force[:, j], r.reaction_moment[:, j, 2]
        for link, sign in ((c, 1.0), (p, -1.0)):
            arm = o - cg[:, link]
            force[:, link] += sign * F
            moment[:, link] += sign * (M + arm[:, 0] * F[:, 1] - arm[:, 1] * F[:, 0])
    for j, tau in driver_torques:
        moment[:, mech.joint_child[j]] += tau
        moment[:, mech.joint_parent[j]] -= tau
    inner = slice(2, -2)  # central differences need neighbours
    f_res = force[inner, 1:] - mech.link_mass[None, 1:, None] * acc[inner, 1:]
    m_res = moment[inner, 1:] - mech.link_inertia[None, 1:, 2, 2] * alpha[inner, 1:]
    return f_res, m_res, force, moment


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
