"""Reference tests for quantities that were only checked code-against-code (issue #14).

Truths used:
* the loop-closure Jacobian of a truly spatial mechanism (mechanisms/rssr_spatial.yaml) against
  central finite differences of the loop residual itself, at configurations OFF the constraint
  manifold (assembled poses perturbed by up to 0.6 rad per variable): there the rotation
  residual ``log(R_A^T R_B)`` is large, so the inverse right Jacobian ``Jr^-1(phi)`` of SO(3)
  matters (on the manifold phi = 0 and ``Jr^-1 = I``, which is why a planar or an assembled
  test cannot see it);
* frame accelerations (``*.ax``, ``*.ay``, ``*.az`` columns) against the time derivative of the
  frame velocity columns along a sweep: with crank rate w and crank acceleration al,
  ``a = w dv/dtheta + al dv/dw`` and ``dv/dw = v / w`` (velocities are linear in the rate), so a
  sweep at constant w gives ``a = w dv/dtheta + al v / w`` from central differences in theta;
* IK with joint limits: the closest reachable pose inside the limits, found by brute force
  over a fine grid of the (2-D) limit box.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kin_helpers import mech_from_yaml

from linkcli.analyses.ik import IKRequest, run_ik
from linkcli.analyses.inputs import Sweep
from linkcli.analyses.solve import SolveRequest, run_solve
from linkcli.cli.common import load_and_compile
from linkcli.core.loop_closure import constraints
from linkcli.core.sweep import solve_sweep

MECHANISMS = Path(__file__).resolve().parents[2] / "mechanisms"


# -- spatial loop Jacobian ---------------------------------------------------------------------
def test_spatial_loop_jacobian_matches_finite_differences_off_the_manifold():
    _, mech = load_and_compile(MECHANISMS / "rssr_spatial.yaml")
    crank = np.radians(np.linspace(0.0, 330.0, 12))[:, None]
    on = solve_sweep(mech, crank, mech.q_init).q  # assembled poses along a crank turn
    rng = np.random.default_rng(7)
    q_all = on + rng.uniform(-0.6, 0.6, on.shape)  # random points near, but off, the manifold
    h = 1e-6
    for q in q_all:
        ev = constraints(mech, q)
        phi = ev.r[3:6]
        # a meaningful point: the rotation residual is large enough that Jr^-1(phi) differs
        # from I by |phi|/2 >= 0.1 (a Jacobian without it is off by that much)
        assert np.linalg.norm(phi) > 0.2
        assert np.linalg.norm(phi) < 2.5  # away from pi, where log(R) is not differentiable
        fd = np.empty_like(ev.J)
        for k in range(mech.n_q):
            e = np.zeros(mech.n_q)
            e[k] = h
            fd[:, k] = (constraints(mech, q + e, False).r - constraints(mech, q - e, False).r) / (2 * h)
        # central differences: truncation h^2 * |r'''| ~ 1e-12 (entries of r and its
        # derivatives are O(1..10) on this 3 m mechanism), round-off eps * |r| / h ~ 1e-9
        np.testing.assert_allclose(ev.J, fd, atol=1e-7, rtol=0)


# -- frame accelerations -----------------------------------------------------------------------
@pytest.mark.parametrize("name, crank, frames", [
    ("fourbar", "crank_pin", ["coupler.P", "rocker.B"]),
    ("rssr_spatial", "crank_pin", ["rocker.B", "coupler.B"]),
])
def test_frame_accelerations_are_the_derivative_of_frame_velocities(name, crank, frames):
    loaded, mech = load_and_compile(MECHANISMS / f"{name}.yaml")
    w, al = 120.0, 300.0  # deg/s, deg/s^2 (both files use degrees)
    step = 0.01  # deg: central differences in theta, error step^2 |v'''| / 6 ~ 1e-9 relative
    req = SolveRequest(sweeps=[Sweep(crank, 10.0, 350.0, step)], rates={crank: w},
                       accelerations={crank: al}, output_frames=frames)
    table = run_solve(mech, req, loaded).table
    data = {c.header: c.values for c in table.columns if c.values.dtype.kind == "f"}
    assert (np.asarray(table.column("status").values) == "ok").all()
    axes = "xy" if mech.planar else "xyz"
    unit = mech.length_unit
    for f in frames:
        # one scale per frame: a component that is identically 0 (rocker.B.x of the RSSR, whose
        # rocker turns about x) is compared at the level of the others
        scale = max(np.abs(w * np.gradient(data[f"{f}.v{axis} [{unit}/s]"], step)).max() for axis in axes)
        for axis in axes:
            v = data[f"{f}.v{axis} [{unit}/s]"]
            a = data[f"{f}.a{axis} [{unit}/s^2]"]
            dv_dtheta = (v[2:] - v[:-2]) / (2 * step)  # per degree
            expected = w * dv_dtheta + al * v[1:-1] / w
            # dropping the centripetal term w x (w x r) changes a by |w|^2 |r| ~ 4 * 1 m/s^2 here
            np.testing.assert_allclose(a[1:-1], expected, atol=1e-6 * scale, rtol=0)


# -- IK with joint limits -----------------------------------------------------------------------
ARM_2R = """
name: limited 2R arm
units: {length: m, angle: deg}
links:
  ground: {frames: {O: [0, 0]}}
  upper: {frames: {O: [0, 0], E: [1, 0]}}
  fore: {frames: {E: [0, 0], tip: [0.5, 0]}}
joints:
  shoulder: {type: revolute, parent: ground.O, child: upper.O, actuated: true, limits: [0, 90]}
  elbow: {type: revolute, parent: upper.E, child: fore.E, actuated: true, limits: [-30, 30]}
base: ground
effector: fore.tip
assembly: {shoulder: 45, elbow: 0}
"""


def _closest_in_box(target, lo, hi, n=1201):
    """Brute force: the (shoulder, elbow) in the limit box (deg) whose tip is closest to target."""
    s, e = np.meshgrid(np.radians(np.linspace(lo[0], hi[0], n)), np.radians(np.linspace(lo[1], hi[1], n)),
                       indexing="ij")
    tip = np.stack([np.cos(s) + 0.5 * np.cos(s + e), np.sin(s) + 0.5 * np.sin(s + e)], -1)
    d = np.linalg.norm(tip - target, axis=-1)
    i = np.unravel_index(np.argmin(d), d.shape)
    return np.degrees([s[i], e[i]]), d[i]


@pytest.mark.parametrize("target, unique", [
    ((1.5 * np.cos(np.radians(-40)), 1.5 * np.sin(np.radians(-40))), True),  # only with shoulder < 0
    ((-0.3, 1.2), True),  # only with shoulder > 90 deg or a bent elbow beyond 30 deg
    # needs the elbow folded far beyond 30 deg: elbow +30 and -30 (with the matching shoulder)
    # are equally close, so only the distance is compared
    ((0.2, 0.6), False),
])
def test_ik_returns_the_closest_pose_inside_the_limits(target, unique):
    mech = mech_from_yaml(ARM_2R)
    out = run_ik(mech, IKRequest(targets=[list(target)], mode="xy"))
    table, failed = out.table, out.n_failed
    data = {c.header: c.values[0] for c in table.columns}
    q = np.array([data["shoulder.q [deg]"], data["elbow.q [deg]"]])
    assert failed == 1 and data["status"] == "unreachable"
    assert 0 - 1e-9 <= q[0] <= 90 + 1e-9 and -30 - 1e-9 <= q[1] <= 30 + 1e-9
    best_q, best_d = _closest_in_box(np.array(target), (0, -30), (90, 30))
    tip = np.array([np.cos(np.radians(q[0])) + 0.5 * np.cos(np.radians(q.sum())),
                    np.sin(np.radians(q[0])) + 0.5 * np.sin(np.radians(q.sum()))])
    d = np.linalg.norm(tip - target)
    # grid spacing 0.075 deg (1.3e-3 rad) on levers <= 1.5 m: the grid optimum is within
    # ~2e-3 m of the true distance, and the minimiser within a grid step of the true one
    assert d <= best_d + 1e-9 + 2e-3
    if unique:
        np.testing.assert_allclose(q, best_q, atol=0.5)
