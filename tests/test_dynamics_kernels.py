"""Analytic derivatives of the dynamics kernels against central differences, and the plain
Python (no numba) path against the compiled one.

Derivatives: constraint-row gradients (every row kind), damper-coordinate gradients, the
applied generalized force against minus the gradient of the potential energy, and the Jacobian
of the Lee-Leok-McClamroch discrete momentum; rotations are perturbed on the manifold
(``R <- exp(hat(h e_k)) R``), h = 1e-6, so the difference error is ~h^2 (1e-12) plus round-off
eps/h (~1e-10): rtol 1e-6 is honest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_dynamics_support import load

from linkcli.core import transforms as tf
from linkcli.core.dynamics.bodies import inertial_properties
from linkcli.core.dynamics.constraints import constraint_rows
from linkcli.core.dynamics.energy import potential_energy
from linkcli.core.dynamics.forces import applied_forces, damper_coordinates
from linkcli.core.dynamics.inertia import discrete_momentum, discrete_momentum_jacobian
from linkcli.core.dynamics.kinematics import joint_geometry, joint_variables
from linkcli.core.dynamics.layout import N_GEOMETRY
from linkcli.core.dynamics.model import build_model
from linkcli.core.dynamics.structs import as_kernel

H = 1e-6
RNG = np.random.default_rng(7)

DRIVEN_ZOO = {"joints": {**{k: v for k, v in {
    "rev": {"type": "revolute", "parent": "ground.R", "child": "a.R", "axis": [0, 0.6, 0.8], "actuated": True},
    "pri": {"type": "prismatic", "parent": "a.P", "child": "b.P", "axis": [0, 0, 1], "actuated": True},
    "uni": {"type": "universal", "parent": "b.U", "child": "c.U"},
    "cyl": {"type": "cylindrical", "parent": "c.C", "child": "d.C", "axis": [1, 0, 0]},
    "sph": {"type": "spherical", "parent": "d.S", "child": "e.S"},
    "fix": {"type": "fixed", "parent": "e.F", "child": "f.F"},
    "pla": {"type": "planar", "parent": "ground.P6", "child": "g.P6"}}.items()}},
    "drivers": {"m1": {"joint": "rev", "type": "harmonic", "offset": 0.3, "amplitude": 0.2, "frequency": 1.0},
                "m2": {"joint": "pri", "type": "constant_speed", "speed": 0.1}}}


def kernel_model(mech):
    mass, inertia = inertial_properties(mech)
    m = build_model(mech, mass, inertia)
    return m, as_kernel(m)


def random_state(mech):
    """Random body poses (not assembled): CG positions and rotations (planar: about z)."""
    nb = mech.n_links - 1
    pos = RNG.normal(size=(nb, 3))
    if mech.planar:
        pos[:, 2] = 0.0
        rot = tf.rot_z(RNG.uniform(-3, 3, nb))
    else:
        rot = Rotation.random(nb, random_state=3).as_matrix()
    return np.ascontiguousarray(pos), np.ascontiguousarray(rot)


def perturbations(mech):
    """(body, is_rotation, axis, column of the generalized velocity) of every coordinate."""
    nb = mech.n_links - 1
    if mech.planar:
        return [(b, c == 2, 2 if c == 2 else c, 3 * b + c) for b in range(nb) for c in range(3)]
    return [(b, c >= 3, c % 3, 6 * b + c) for b in range(nb) for c in range(6)]


def perturbed(pos, rot, b, is_rot, axis, h):
    pos, rot = pos.copy(), rot.copy()
    if is_rot:
        e = np.zeros(3)
        e[axis] = h
        rot[b] = tf.exp_so3(e) @ rot[b]
    else:
        pos[b, axis] += h
    return pos, rot


def central_difference(f, mech, pos, rot):
    """d f / d (generalized coordinate) (..., n) by central differences on the manifold."""
    cols = []
    for b, is_rot, axis, _ in perturbations(mech):
        fp = f(*perturbed(pos, rot, b, is_rot, axis, H))
        fm = f(*perturbed(pos, rot, b, is_rot, axis, -H))
        cols.append((fp - fm) / (2 * H))
    return np.stack(cols, axis=-1)


def geometry(mech, km, pos, rot):
    JW = np.zeros((mech.n_joints, N_GEOMETRY, 3))
    joint_geometry(km, pos, rot, JW)
    return JW


@pytest.mark.parametrize("name, overrides", [("joint_zoo.yaml", DRIVEN_ZOO), ("fourbar_spatial.yaml", None),
                                             ("spring_mass_damped.yaml", None), ("fourbar_w3.yaml", None)])
def test_constraint_row_gradients(name, overrides):
    mech = load(name, overrides)
    m, km = kernel_model(mech)
    pos, rot = random_state(mech)
    n_rows, n = len(m.row_index), len(m.coordinate_scale)
    drv = np.array([0.3, 0.05])[:len(mech.driver_names)]
    rows = np.arange(n_rows)

    def values(p, R):
        g, G = np.zeros(n_rows), np.zeros((n_rows, n))
        constraint_rows(km, rows, n_rows, R, geometry(mech, km, p, R), drv, g, G)
        return g

    g, G = np.zeros(n_rows), np.zeros((n_rows, n))
    constraint_rows(km, rows, n_rows, rot, geometry(mech, km, pos, rot), drv, g, G)
    fd = central_difference(values, mech, pos, rot)
    assert np.allclose(G, fd, rtol=1e-6, atol=1e-7 * max(1.0, np.abs(G).max()))


@pytest.mark.parametrize("name", ["joint_zoo.yaml", "spring_mass_damped.yaml"])
def test_damper_coordinate_gradients(name):
    mech = load(name)
    m, km = kernel_model(mech)
    pos, rot = random_state(mech)
    n_e, n = len(m.damper_coefficient), len(m.coordinate_scale)
    assert n_e > 0

    def coords(p, R):
        s, D = np.zeros(n_e), np.zeros((n_e, n))
        damper_coordinates(km, p, R, geometry(mech, km, p, R), s, D)
        return s

    s, D = np.zeros(n_e), np.zeros((n_e, n))
    damper_coordinates(km, pos, rot, geometry(mech, km, pos, rot), s, D)
    assert np.allclose(D, central_difference(coords, mech, pos, rot), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["joint_zoo.yaml", "spring_mass.yaml", "fourbar_spatial.yaml"])
def test_applied_force_is_minus_the_potential_gradient(name):
    """Gravity, axial and torsional springs are conservative: Q = -dV/dx exactly (this is what
    makes the variational integrator conserve energy)."""
    mech = load(name)
    m, km = kernel_model(mech)
    pos, rot = random_state(mech)
    q_ref = np.zeros(mech.n_q)

    def joint_vars(p, R):
        q = np.zeros(mech.n_q)
        joint_variables(km, p, R, geometry(mech, km, p, R), q_ref, q, np.zeros((3, 3)))
        return q

    def energy(p, R):
        return np.array(potential_energy(km, p, R, joint_vars(p, R)))

    Q = np.zeros(len(m.coordinate_scale))
    applied_forces(km, pos, rot, geometry(mech, km, pos, rot), joint_vars(pos, rot), np.zeros(0), Q)
    dV = central_difference(energy, mech, pos, rot)
    assert np.allclose(Q, -dV, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(Q).max()))


def test_discrete_momentum_jacobian():
    J = np.array([[1.0, 0.1, -0.2], [0.1, 2.0, 0.05], [-0.2, 0.05, 3.0]])
    R0 = Rotation.random(random_state=1).as_matrix()
    R1 = tf.exp_so3([0.1, -0.05, 0.2]) @ R0  # one step of a fast rotation
    F, B, K = np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3))
    h = 1e-3
    discrete_momentum_jacobian(J, R0, R1, h, K, F, B)
    cols = []
    for k in range(3):
        e = np.zeros(3)
        e[k] = H
        plus = np.array(discrete_momentum(J, R0, tf.exp_so3(e) @ R1, F, B)) / h
        minus = np.array(discrete_momentum(J, R0, tf.exp_so3(-e) @ R1, F, B)) / h
        cols.append((plus - minus) / (2 * H))
    assert np.allclose(K, np.column_stack(cols), rtol=1e-6, atol=1e-6 * np.abs(K).max())
    # and the discrete momentum is h J_world w for a small rotation (consistency with M v)
    w = np.array([0.3, -0.2, 0.5])
    p = np.array(discrete_momentum(J, R0, tf.exp_so3(1e-6 * w) @ R0, F, B)) / 1e-6
    assert np.allclose(p, R0 @ J @ R0.T @ w, rtol=1e-6)


SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_dynamics_fourbar import joint_state
from test_dynamics_support import load
from linkcli.core.dynamics import simulate
from linkcli.core.dynamics import integrator
q0, qd0 = joint_state(np.radians(60.0))
r = simulate(load("fourbar_w3.yaml"), q0, qd0, t_end=0.02, dt=1e-3)
print(json.dumps({{"compiled": hasattr(integrator.run_steps, "signatures"), "q": r.q[-1].tolist(),
                  "lam": r.reaction_force[-1].tolist()}}))
"""


def run_script(no_jit: bool) -> dict:
    env = dict(os.environ)
    env.pop("LINKCLI_NO_JIT", None)
    if no_jit:
        env["LINKCLI_NO_JIT"] = "1"
    tests = str(Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(tests=tests)], env=env, capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parent.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_plain_python_kernels_give_the_compiled_result():
    pytest.importorskip("numba")
    plain, compiled = run_script(True), run_script(False)
    assert not plain["compiled"] and compiled["compiled"]
    assert np.allclose(plain["q"], compiled["q"], rtol=0, atol=1e-13)
    assert np.allclose(plain["lam"], compiled["lam"], rtol=1e-12, atol=1e-9)


def test_importing_linkcli_does_not_import_numba():
    code = "import sys, linkcli, linkcli.core.jit, linkcli.core.profiles; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent.parent)
    assert out.stdout.strip() == "False"


def test_numba_cache_falls_back_to_a_user_directory_for_a_read_only_install(tmp_path, monkeypatch):
    from linkcli.core import jit

    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    assert jit.cache_dir_for(str(pkg)) is None  # writable: numba's default next to the sources
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    # a read-only install (os.access is what decides; chmod does not bind when tests run as root)
    monkeypatch.setattr(jit.os, "access", lambda path, mode: False)
    assert jit.cache_dir_for(str(pkg)) == str(tmp_path / "cache" / "linkcli" / "numba")
