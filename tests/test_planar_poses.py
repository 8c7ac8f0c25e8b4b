"""The elementwise planar pass (forward.planar_link_poses / planar_frame_positions /
planar_effector_pose) that result tables of planar mechanisms and a study's variants use.

Truths: the general 4x4 pass (link_poses / frame_positions / effector_pose: batched matrix
products of Rodrigues patterns, an independent code path) on every planar example and on a
mechanism built for the hard cases (millimetres, frames at angles, a tool frame, an inverted
prismatic joint on an oblique axis); and, for the four-bar, closed forms: crank pin A at the
crank length and angle, pin B by circle intersection, link lengths kept. Tolerances: 1e-12 m
is ~100x the rounding of both sides (a few ulp of the <= 10 m mechanisms; products of up to
a dozen poses); 1e-9 m against the closed forms is the sweep's tolerance (1e-10, relative to
the mechanism size) with margin.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kin_helpers import mech_from_yaml

from linkcli.core import forward

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "mechanisms").glob("*.yaml"))

ODD = """
name: odd slider-crank
kind: planar
units: {length: mm, angle: deg}
links:
  ground:
    frames: {O: [0, 0], R: [400, 50, 30]}
  crank:
    frames: {O: [0, 0, 15], A: [100, 20, -40], P: [30, 40, 10]}
  rod:
    frames: {A: [0, 0, 20], B: [350, -10, 5], Q: [100, 60]}
  slider:
    frames: {B: [0, 0, 70], R: [10, 5, -25]}
joints:
  crank_pin: {type: revolute, parent: ground.O, child: crank.O, actuated: true}
  A: {type: revolute, parent: crank.A, child: rod.A}
  B: {type: revolute, parent: rod.B, child: slider.B}
  slide: {type: prismatic, parent: slider.R, child: ground.R, axis: [0.6, 0.8]}
base: ground
effector: rod.Q
tool: {origin: [5, -3], angle: 12}
"""


def _planar_examples():
    out = []
    for p in EXAMPLES:
        mech = mech_from_yaml(p.read_text(encoding="utf-8"), str(p))
        if mech.planar:
            out.append(pytest.param(mech, id=p.stem))
    return out + [pytest.param(mech_from_yaml(ODD), id="odd_mm_angled_inverted_prismatic")]


def _xycs(T: np.ndarray) -> np.ndarray:
    return np.stack([T[..., 0, 3], T[..., 1, 3], T[..., 0, 0], T[..., 1, 0]], axis=-1)


def test_the_odd_mechanism_has_the_hard_cases():
    mech = mech_from_yaml(ODD)
    steps, axes = forward.planar_steps(mech)
    assert mech.length_unit == "mm" and not mech.q_is_rotation.all()
    assert any(not st.forward and not mech.q_is_rotation[st.s] for st in steps)  # inverted prismatic
    assert 0 < abs(axes[~mech.q_is_rotation][0, 1]) < 1  # oblique axis
    assert any(abs(st.before[3]) > 0.1 or abs(st.after[3]) > 0.1 for st in steps)  # frames at angles


@pytest.mark.parametrize("mech", _planar_examples())
def test_planar_pass_equals_the_4x4_pass(mech):
    assert forward.planar_steps(mech) is not None  # every planar example is planar in SE(2)
    q = np.random.default_rng(4).normal(size=(6, 5, mech.n_q)) * 2.0  # two batch dimensions, any q
    T = forward.link_poses(mech, q)
    P = forward.planar_link_poses(mech, q)
    assert P.shape == (6, 5, mech.n_links, 4)
    np.testing.assert_allclose(P, _xycs(T), rtol=0, atol=1e-12)
    p = forward.planar_frame_positions(mech, P)
    ref = forward.frame_positions(mech, T)
    np.testing.assert_allclose(p, ref[..., :2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ref[..., 2], 0.0, atol=1e-12)  # nothing lost: planar frames lie in z = 0
    sel = [mech.n_frames - 1, 0]
    np.testing.assert_array_equal(forward.planar_frame_positions(mech, P, sel), p[..., sel, :])
    E = forward.planar_effector_pose(mech, P)
    np.testing.assert_allclose(E, _xycs(forward.effector_pose(mech, T)), rtol=0, atol=1e-12)
    # one configuration (no batch) and a single row give the same numbers as the batch
    np.testing.assert_array_equal(forward.planar_link_poses(mech, q[2, 3]), P[2, 3])
    np.testing.assert_array_equal(forward.planar_link_poses(mech, q[2, 3:4])[0], P[2, 3])


@pytest.mark.parametrize("mech", _planar_examples())
def test_not_finite_variables_give_nan_poses_where_the_4x4_pass_does(mech):
    q = np.random.default_rng(5).normal(size=(mech.n_q + 1, mech.n_q))
    for k in range(mech.n_q):
        q[k, k] = np.nan  # row k: variable k unknown
    q[mech.n_q] = np.nan  # a failed row of a solve
    T = forward.link_poses(mech, q)
    P = forward.planar_link_poses(mech, q)
    np.testing.assert_array_equal(np.isnan(P), np.isnan(_xycs(T)))
    np.testing.assert_array_equal(np.isnan(forward.planar_frame_positions(mech, P)),
                                  np.isnan(forward.frame_positions(mech, T)[..., :2]))
    ok = ~np.isnan(P)
    np.testing.assert_allclose(P[ok], _xycs(T)[ok], rtol=0, atol=1e-12)


def test_variant_joint_frames_broadcast_over_variants():
    """Per-variant joint and link frames (V, 1, ...) against q (V, n, n_q): each variant equals the
    pass of the mechanism with that variant's frames (the 4x4 pass of variant_mechanism), and
    the nominal frames given as arrays equal the nominal pass bit for bit."""
    from linkcli.core.variant_sweep import variant_mechanism

    mech = mech_from_yaml(ODD)
    V, n = 3, 4
    rng = np.random.default_rng(6)
    TP = np.repeat(mech.T_parent_joint[None], V, axis=0)
    TC = np.repeat(mech.T_child_joint[None], V, axis=0)
    TL = np.repeat(mech.T_link_frame[None], V, axis=0)
    for T in (TP, TC, TL):
        T[1:, :, :2, 3] += rng.normal(scale=0.01, size=T[1:, :, :2, 3].shape)  # variant 0 nominal
    q = rng.normal(size=(V, n, mech.n_q))
    fP, fC = forward.planar_frames(TP), forward.planar_frames(TC)
    P = forward.planar_link_poses(mech, q, (fP[:, None], fC[:, None]))
    F = forward.planar_frame_positions(mech, P, None, TL[:, None])
    assert P.shape == (V, n, mech.n_links, 4) and F.shape == (V, n, mech.n_frames, 2)
    np.testing.assert_array_equal(P[0], forward.planar_link_poses(mech, q[0]))
    for v in range(V):
        m = variant_mechanism(mech, TL[v], TP[v], TC[v])
        T = forward.link_poses(m, q[v])
        np.testing.assert_allclose(P[v], _xycs(T), rtol=0, atol=1e-12)
        np.testing.assert_allclose(F[v], forward.frame_positions(m, T)[..., :2], rtol=0, atol=1e-12)


def test_fourbar_pins_equal_the_closed_form():
    """fourbar.yaml (ground 4, crank 1, coupler 3.5, rocker 3) swept over a turn: A at the crank
    length and angle, B by circle intersection (the open branch), P on the coupler at (1.75, 0.6)."""
    from linkcli.compile import compile_mechanism
    from linkcli.core.sweep import solve_sweep
    from linkcli.io.loader import load_mechanism

    mech = compile_mechanism(load_mechanism(str(REPO / "mechanisms" / "fourbar.yaml")).model)
    theta = np.linspace(0.0, 2 * np.pi, 721)
    res = solve_sweep(mech, theta[:, None], mech.q_init)
    assert np.all(res.status == 0)
    P = forward.planar_link_poses(mech, res.q)
    p = forward.planar_frame_positions(mech, P)
    A = p[:, mech.frame_index("crank.A")]
    np.testing.assert_allclose(A, np.stack([np.cos(theta), np.sin(theta)], -1), rtol=0, atol=1e-15)
    vx, vy = 4.0 - np.cos(theta), -np.sin(theta)
    L2 = vx * vx + vy * vy
    xl = (3.5**2 - 3.0**2 + L2) / (2 * L2)
    hl = np.sqrt(3.5**2 / L2 - xl * xl)
    B = np.stack([np.cos(theta) + xl * vx - hl * vy, np.sin(theta) + xl * vy + hl * vx], -1)
    for name in ("coupler.B", "rocker.B"):
        np.testing.assert_allclose(p[:, mech.frame_index(name)], B, rtol=0, atol=1e-9)
    np.testing.assert_allclose(p[:, mech.frame_index("rocker.O4")], [[4.0, 0.0]] * len(theta), rtol=0, atol=1e-9)
    u = (B - A) / 3.5
    Pt = A + 1.75 * u + 0.6 * np.stack([-u[:, 1], u[:, 0]], -1)
    np.testing.assert_allclose(p[:, mech.frame_index("coupler.P")], Pt, rtol=0, atol=1e-9)
    E = forward.planar_effector_pose(mech, P)  # effector coupler.P, no tool offset: the coupler's angle
    np.testing.assert_allclose(E[:, :2], Pt, rtol=0, atol=1e-9)
    np.testing.assert_allclose(E[:, 2:], u, rtol=0, atol=1e-9)


def test_not_planar_is_refused():
    mech = mech_from_yaml((REPO / "mechanisms" / "rssr_spatial.yaml").read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="not planar"):
        forward.planar_link_poses(mech, np.zeros(mech.n_q))


@pytest.mark.parametrize("name", ["fourbar.yaml", "slider_crank.yaml", "shaker_pendulum.yaml", "watt_sixbar.yaml"])
def test_solve_table_equals_the_4x4_path(name, monkeypatch):
    """``linkcli solve``'s table (run_solve) with the planar pass equals the one the 4x4 pass gives
    (planar_steps hidden from solve.py and planar_metrics.py): the same headers, every column not
    computed from poses bit for bit, the pose columns (effector, frames, transmission angles) to
    1e-12 m (in the file's units) / 1e-12 rad."""
    import linkcli.analyses.solve as solve_module
    import linkcli.core.planar_metrics as metrics
    from linkcli.analyses.solve import request_from_defaults, run_solve
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    loaded = load_mechanism(str(REPO / "mechanisms" / name))
    mech = compile_mechanism(loaded.model)
    req = request_from_defaults(loaded.model.analysis.solve if loaded.model.analysis else None)
    planar = run_solve(mech, req).table
    assert solve_module._poses(mech, mech.q_init[None])[2] is not None  # the planar pass
    monkeypatch.setattr(solve_module, "planar_steps", lambda m: None)
    monkeypatch.setattr(metrics, "planar_steps", lambda m: None)
    assert solve_module._poses(mech, mech.q_init[None])[2] is None  # the 4x4 pass
    general = run_solve(mech, req).table
    assert planar.headers() == general.headers()
    for h in planar.headers():
        a, b = planar[h], general[h]
        if a.dtype.kind == "f" and not np.array_equal(a, b, equal_nan=True):
            col = planar.column(h)
            assert col.unit in (mech.length_unit, mech.angle_unit) and col.quantity != "q", h
            tol = 1e-12 / (mech.length_scale if col.unit == mech.length_unit else mech.angle_scale)
            np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=h)
        else:
            np.testing.assert_array_equal(a, b, err_msg=h)


def test_planar_point_is_the_4x4_transform_of_a_point():
    """The one home of ``t + R p`` (frame positions and the transmission angles' joint centres):
    against the homogeneous 4x4 product, over a batch of poses and points, and exact for the
    constant 0/1 shortcuts. Tolerance: 1e-12 m, ~100x the rounding of 3 m coordinates."""
    rng = np.random.default_rng(7)
    theta = rng.uniform(-np.pi, np.pi, 50)
    x, y = rng.uniform(-3, 3, (2, 50))
    px, py = rng.uniform(-2, 2, (2, 50))
    T = np.zeros((50, 4, 4))
    T[:, 0, 0], T[:, 0, 1], T[:, 1, 0], T[:, 1, 1] = np.cos(theta), -np.sin(theta), np.sin(theta), np.cos(theta)
    T[:, 0, 3], T[:, 1, 3], T[:, 2, 2], T[:, 3, 3] = x, y, 1.0, 1.0
    want = np.einsum("nij,nj->ni", T, np.stack([px, py, np.zeros(50), np.ones(50)], axis=1))[:, :2]
    got = forward.planar_point((x, y, np.cos(theta), np.sin(theta)), px, py)
    np.testing.assert_allclose(np.stack(got, axis=1), want, rtol=0, atol=1e-12)
    gx, gy = forward.planar_point((x, y, np.cos(theta), np.sin(theta)), 0.0, 0.0)
    assert np.array_equal(gx, x) and np.array_equal(gy, y)  # the origin: the pose's own position
