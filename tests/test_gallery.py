"""The gallery of classic mechanisms (mechanisms/gallery/*.yaml): each one is a regression
example (validates with no warning, matches the JSON Schema, its sweep solves without a failed
row, it simulates when it has masses, its picture exists) and is checked against its KNOWN
property, from the geometry, never from a stored run of itself:

* Peaucellier-Lipkin: P on the line x = (OA^2 - AC^2) / (2 r) exactly (inversion);
* Hoekens / Chebyshev lambda: P by circle intersection in closed form; within 0.01 of y = 4 over
  half a crank turn (crank 90..270 deg) with a stroke over 4 (the linkage's classic property);
* Chebyshev 4:5:2: its P path lies on the Hoekens curve (Roberts-Chebyshev cognates), straight
  within 0.01 over a stroke over 3.8;
* Scotch yoke: x = r cos(theta), v, a in closed form;
* quick return: time ratio (pi + 2 asin(r/d)) / (pi - 2 asin(r/d)) from the lever's extremes;
* Sarrus: the top plate moves along z only and does not turn; mobility 1 by rank;
* Bennett: mobility 1 by rank although Gruebler says -2, and Bennett's closure equation
  tan(t1/2) tan(t2/2) = sin((beta + alpha)/2) / sin((beta - alpha)/2) along the sweep;
* Watt: P by circle intersection, the path centrally symmetric, deviation of fifth order;
* Jansen: the foot by successive circle intersections from the published dimensions: stride,
  lift and the flat bottom;
* Stewart-Gough: forward kinematics recovers a pose from its closed-form leg lengths;
* UR5: tool pose by an independent product of standard DH matrices written out here, and the
  published zero pose (a2 + a3, -(d4 + d6), d1 - d5).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkcli.analyses.simulate import SimulateRequest, run_simulate  # noqa: F401 (used below)
from linkcli.analyses.solve import SolveRequest, request_from_defaults, run_solve
from linkcli.cli.common import load_and_compile
from linkcli.core.forward import effector_pose, link_poses
from linkcli.core.mobility import mobility_report

REPO = Path(__file__).resolve().parents[1]
GALLERY = REPO / "mechanisms" / "gallery"
FILES = sorted(GALLERY.glob("*.yaml"))
SCHEMA_LINE = "# yaml-language-server: $schema=../../schemas/mechanism.schema.json"

CLASSICS = {"peaucellier", "hoekens", "chebyshev", "watt", "jansen", "scotch_yoke", "quick_return", "sarrus", "bennett",
            "stewart_gough", "ur5"}


def _solve(name):
    loaded, mech = load_and_compile(GALLERY / f"{name}.yaml")
    out = run_solve(mech, request_from_defaults(loaded.model.analysis.solve), loaded)
    return mech, out, {c.header: c.values for c in out.table.columns}


def test_the_gallery_is_complete():
    assert CLASSICS <= {f.stem for f in FILES}


# -- generic: every gallery file ---------------------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_validates_matches_schema_and_has_a_tutorial_header(path):
    import json

    import jsonschema

    from linkcli.io.yaml_source import read_yaml_file

    loaded, mech = load_and_compile(path)
    assert loaded.warnings == []
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == SCHEMA_LINE and "Try:" in "\n".join(lines[:40])
    schema = json.loads((REPO / "schemas" / "mechanism.schema.json").read_text(encoding="utf-8"))
    doc, _ = read_yaml_file(path)
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(doc)) == []
    assert (REPO / "docs" / "img" / f"gallery_{path.stem}.png").is_file(), "run python docs/make_gallery.py"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_sweep_solves_without_a_failed_row(path):
    mech, out, data = _solve(path.stem)
    assert out.n_failed == 0
    assert set(data["status"]) == {"ok"}
    assert len(data["status"]) > 10


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_simulates_when_it_has_masses(path):
    from linkcli.analyses.simulate import request_from_defaults as sim_defaults

    loaded, mech = load_and_compile(path)
    assert mech.link_has_mass.any() and loaded.model.analysis.simulate is not None
    import dataclasses

    # 0.2 s of the file's simulation (200 steps) keeps the suite fast; the run checks that the
    # example assembles, starts and integrates with its drivers, not long-time behaviour
    req = sim_defaults(loaded.model.analysis.simulate)
    req = dataclasses.replace(req, t_end=min(req.t_end, 0.2))
    out = run_simulate(mech, req, loaded)
    assert out.ok, out.messages
    # constraints held and energy balanced: the integrator's own invariants, loose bounds
    # (drivers do work; the balance error is total - initial - work, 1e-6 of the energy scale)
    e = out.table.column("energy.balance_error [J]").values
    scale = max(1.0, float(np.abs(out.table.column("energy.kinetic [J]").values).max()))
    assert np.abs(e).max() < 1e-3 * scale


# -- properties -------------------------------------------------------------------------------
def test_peaucellier_draws_an_exact_straight_line():
    mech, _, d = _solve("peaucellier")
    x, y = d["side_ap.P.x [m]"], d["side_ap.P.y [m]"]
    r, OA, AC = 1.2, 3.0, 1.0
    # frames are written to 10 decimals (5e-11 m); the inversor amplifies that by at most ~10
    np.testing.assert_allclose(x, (OA**2 - AC**2) / (2 * r), atol=1e-8)
    assert y.max() - y.min() > 3.0  # and it really moves along the line
    # inversion: |OC| |OP| = OA^2 - AC^2 with O, C, P collinear
    C = np.stack([d["crank.C.x [m]"], d["crank.C.y [m]"]], -1)
    P = np.stack([x, y], -1)
    np.testing.assert_allclose(np.linalg.norm(C, axis=1) * np.linalg.norm(P, axis=1), 8.0, atol=1e-8)
    np.testing.assert_allclose(C[:, 0] * P[:, 1] - C[:, 1] * P[:, 0], 0.0, atol=1e-8)


def _hoekens_closed_form(theta):
    """P of the Hoekens four-bar (crank 1 at O2 = 0, O4 = (2, 0), coupler AB = 2.5, rocker 2.5,
    P = A + 2 (B - A)) by circle intersection, the branch with B above the line A-O4."""
    A = np.stack([np.cos(theta), np.sin(theta)], -1)
    v = np.array([2.0, 0.0]) - A
    L = np.linalg.norm(v, axis=-1)
    x = L / 2  # equal circles of radius 2.5 about A and O4
    h = np.sqrt(2.5**2 - x**2)
    e = v / L[:, None]
    B = A + x[:, None] * e + h[:, None] * np.stack([-e[:, 1], e[:, 0]], -1)
    return A + 2 * (B - A)


def test_hoekens_path_and_its_straight_stretch():
    mech, _, d = _solve("hoekens")
    theta = np.radians(d["crank_pin.q [deg]"])
    P = np.stack([d["coupler.P.x [m]"], d["coupler.P.y [m]"]], -1)
    np.testing.assert_allclose(P, _hoekens_closed_form(theta), atol=1e-9)  # solver tol 1e-10
    stretch = (np.degrees(theta) >= 90) & (np.degrees(theta) <= 270)
    # the classic property: half a crank turn on a near-straight line y = 4; our closed form
    # gives 0 <= y - 4 <= 0.0094 and a stroke of 4.4 (bound 0.01, the commonly quoted ~0.2 %
    # of the stroke)
    assert np.abs(P[stretch, 1] - 4.0).max() < 0.01
    assert np.ptp(P[stretch, 0]) > 4.0


def test_chebyshev_is_a_cognate_of_hoekens():
    mech, _, d = _solve("chebyshev")
    P = np.stack([d["coupler.P.x [m]"], d["coupler.P.y [m]"]], -1)
    curve = _hoekens_closed_form(np.radians(np.linspace(0, 360, 200001)))
    gaps = np.array([np.linalg.norm(curve - p, axis=1).min() for p in P])
    # Roberts-Chebyshev: the same coupler curve. The curve is sampled every 1.8e-3 deg of crank,
    # P moving <= 5 * 3.1e-5 m between samples: a point on the curve is within 1e-4 of a sample
    assert gaps.max() < 1e-4
    assert np.abs(P[:, 1] - 4.0).max() < 0.01 and np.ptp(P[:, 0]) > 3.8


def test_scotch_yoke_is_simple_harmonic():
    mech, _, d = _solve("scotch_yoke")
    theta = np.radians(d["crank_pin.q [deg]"])
    w, r = np.radians(360.0), 0.5
    # guide is the displacement from the drawn pose (x = r): x = r cos(theta) exactly
    np.testing.assert_allclose(d["guide.q [m]"] + r, r * np.cos(theta), atol=1e-12)
    np.testing.assert_allclose(d["yoke.rail.vx [m/s]"], -r * w * np.sin(theta), atol=1e-10)
    np.testing.assert_allclose(d["yoke.rail.ax [m/s^2]"], -r * w**2 * np.cos(theta), atol=1e-9)


def test_quick_return_time_ratio():
    mech, _, d = _solve("quick_return")
    crank, lever = d["crank_pin.q [deg]"], d["pivot.q [deg]"]
    i_max, i_min = int(np.argmax(lever)), int(np.argmin(lever))

    def vertex(i):  # parabola through the extreme grid point and its neighbours
        y0, y1, y2 = lever[i - 1], lever[i], lever[i + 1]
        return crank[i] + 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2) * (crank[1] - crank[0])

    a, b = sorted((vertex(i_max), vertex(i_min)))
    swing1, swing2 = b - a, 360 - (b - a)
    r, dist = 1.0, 2.0
    beta = np.degrees(2 * np.arcsin(r / dist))
    expected = (180 + beta) / (180 - beta)
    # the extremes from a parabola through 1-deg samples: error << 0.01 deg, ratio to 1e-3
    assert max(swing1, swing2) / min(swing1, swing2) == pytest.approx(expected, abs=1e-3)
    assert np.degrees(np.radians(np.ptp(lever))) == pytest.approx(2 * np.degrees(np.arcsin(r / dist)), abs=1e-3)


def test_sarrus_top_translates_along_z():
    mech, _, d = _solve("sarrus")
    np.testing.assert_allclose(d["top.C.x [m]"], 0.5, atol=1e-9)
    np.testing.assert_allclose(d["top.C.y [m]"], 0.5, atol=1e-9)
    for c in ("roll", "pitch", "yaw"):
        np.testing.assert_allclose(d[f"effector.{c} [deg]"], 0.0, atol=1e-7)
    assert np.ptp(d["top.C.z [m]"]) > 1.0
    q = np.radians(np.stack([d[f"{j}.q [deg]"] for j in mech.joint_names], -1))
    assert mech.gruebler_mobility == 0
    assert mobility_report(mech, q[len(q) // 3]).mobility == 1


def test_bennett_moves_with_mobility_one():
    mech, _, d = _solve("bennett")
    assert mech.gruebler_mobility == -2
    q = np.radians(np.stack([d[f"{j}.q [deg]"] for j in ("j1", "j2", "j3", "j4")], -1))
    for k in (0, len(q) // 2, len(q) - 1):
        assert mobility_report(mech, q[k]).mobility == 1
    alpha, beta = np.radians(45), np.radians(60)
    K = np.sin((beta + alpha) / 2) / np.sin((beta - alpha) / 2)
    # tan(t1/2) tan(t2/2) = K, multiplied out so that t1 = 180 deg (t2 = 0) is fine too
    h1, h2 = q[:, 0] / 2, q[:, 1] / 2
    np.testing.assert_allclose(np.sin(h1) * np.sin(h2) - K * np.cos(h1) * np.cos(h2), 0.0, atol=1e-9)
    np.testing.assert_allclose(q[:, 2], -q[:, 0], atol=1e-9)


def _dh(theta, d, a, alpha):
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0, sa, ca, d], [0, 0, 0, 1]])


@pytest.mark.parametrize("q_deg", [[0, 0, 0, 0, 0, 0], [10, -80, 70, -30, 45, 120], [-45, -120, 30, 60, -90, 10]])
def test_ur5_forward_kinematics_from_the_published_table(q_deg):
    _, mech = load_and_compile(GALLERY / "ur5.yaml")
    table = [(0.089159, 0, np.pi / 2), (0, -0.425, 0), (0, -0.39225, 0), (0.10915, 0, np.pi / 2),
             (0.09465, 0, -np.pi / 2), (0.0823, 0, 0)]
    q = np.radians(q_deg)
    T = np.eye(4)
    for qi, (d, a, alpha) in zip(q, table, strict=True):
        T = T @ _dh(qi, d, a, alpha)
    got = effector_pose(mech, link_poses(mech, q))
    np.testing.assert_allclose(got, T, atol=1e-12)
    if not any(q_deg):
        np.testing.assert_allclose(got[:3, 3], [-0.81725, -0.19145, 0.089159 - 0.09465], atol=1e-12)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_assembly_estimate_closes_the_loops(path):
    """Frames are written at their drawn positions (estimate 0, exact up to the 10-decimal
    rounding of the coordinates) or, for Bennett, to 0.01 deg (lever <= 2.3 m: < 2e-4 m);
    1e-3 catches a wrong branch or sign (off by the order of the links, >= 0.1)."""
    from test_examples import loop_residuals

    _, mech = load_and_compile(path)
    if mech.n_loops:
        res = loop_residuals(mech, mech.q_init)
        assert res.max() < 1e-3


def test_watt_midpoint_is_an_undulation_point_of_a_symmetric_path():
    mech, _, d = _solve("watt")
    phi = np.radians(d["pivot1.q [deg]"])
    P = np.stack([d["coupler.P.x [m]"], d["coupler.P.y [m]"]], -1)
    def closed_form(phi):  # A on the arm circle, B by circle intersection (|AB| = 1, |B O2| = 2)
        A = 2 * np.stack([np.cos(phi), np.sin(phi)], -1)
        v = np.array([4.0, 1.0]) - A
        L = np.linalg.norm(v, axis=1)
        x = (1 - 4 + L**2) / (2 * L)
        h = np.sqrt(1 - x**2)
        e = v / L[:, None]
        B = A + x[:, None] * e + h[:, None] * np.stack([-e[:, 1], e[:, 0]], -1)
        return (A + B) / 2

    np.testing.assert_allclose(P, closed_form(phi), atol=1e-9)
    # central symmetry of the linkage about P0 = (2, 0.5): 2 P0 - P is on the path too. Dense
    # closed-form samples 1e-4 deg apart (P moves < 4e-6 m between them)
    curve = closed_form(np.radians(np.linspace(-20, 20, 400001)))
    mirrored = np.array([4.0, 1.0]) - P
    gaps = np.array([np.linalg.norm(curve - m, axis=1).min() for m in mirrored])
    assert gaps.max() < 1e-5
    # deviation from x = 2 of fifth order in the travel: doubling the travel multiplies it by
    # 2^5 = 32 (the next term changes that by ~10 % at these travels)
    dev = np.abs(P[:, 0] - 2.0)
    travel = np.abs(P[:, 1] - 0.5)
    k = np.polyfit(np.log(travel[dev > 1e-12]), np.log(dev[dev > 1e-12]), 1)[0]
    assert 4.5 < k < 5.5
    assert dev.max() < 2e-3 and np.ptp(P[:, 1]) > 1.0


@pytest.mark.parametrize("dp, rpy_deg", [((0.02, -0.03, 0.05), (3.0, -2.0, 5.0)),
                                          ((-0.1, 0.05, -0.15), (-8.0, 6.0, -12.0))])
def test_stewart_gough_forward_kinematics_recovers_the_pose(dp, rpy_deg):
    """Pick a platform pose, compute the six leg lengths by the closed-form inverse
    |c + R (b_i - c0) - a_i| from the anchors in the file, give them to `solve` and get the
    pose back (forward kinematics has no closed form: Newton from the drawn pose)."""
    from linkcli.core.transforms import rpy_to_matrix

    loaded, mech = load_and_compile(GALLERY / "stewart_gough.yaml")
    frames = dict(zip(mech.frame_names, mech.T_link_frame, strict=True))
    a = np.array([frames[f"ground.a{i}"][:3, 3] for i in range(1, 7)])
    b = np.array([frames[f"platform.b{i}"][:3, 3] for i in range(1, 7)])
    c0 = frames["platform.C"][:3, 3]
    R = rpy_to_matrix(np.radians(rpy_deg))
    c = c0 + np.asarray(dp)
    lengths = np.linalg.norm(c + (b - c0) @ R.T - a, axis=1)
    change = lengths - np.linalg.norm(b - a, axis=1)
    req = SolveRequest(set={f"leg{i}": float(v) for i, v in enumerate(change, 1)}, output_frames=["platform.C"])
    out = run_solve(mech, req, loaded)
    d = {col.header: col.values[0] for col in out.table.columns}
    assert d["status"] == "ok"
    # solver tolerance 1e-10; the anchors are written to 10 digits, but both sides use them
    np.testing.assert_allclose([d["effector.x [m]"], d["effector.y [m]"], d["effector.z [m]"]], c, atol=1e-8)
    np.testing.assert_allclose([d[f"effector.{k} [deg]"] for k in ("roll", "pitch", "yaw")], rpy_deg, atol=1e-6)


def _circles(P, rP, Q, rQ, side):
    """Intersection of the circles (P, rP) and (Q, rQ) (n, 2); side +1: left of P -> Q."""
    v = Q - P
    L = np.linalg.norm(v, axis=-1)
    x = (rP**2 - rQ**2 + L**2) / (2 * L)
    h = np.sqrt(rP**2 - x**2)
    e = v / L[:, None]
    return P + x[:, None] * e + side * h[:, None] * np.stack([-e[:, 1], e[:, 0]], -1)


def test_jansen_foot_path_stride_and_lift():
    """The foot G by successive circle intersections from Jansen's published dimensions (cm),
    then stride, lift and the flat bottom of the path."""
    mech, _, d = _solve("jansen")
    a, b, c, dd, e, f, g, h, i, j, k, ll, m = 38, 41.5, 39.3, 40.1, 55.8, 39.4, 36.7, 65.7, 49, 50, 61.9, 7.8, 15
    theta = np.radians(d["crank.q [deg]"])
    def foot(theta):
        A = m * np.stack([np.cos(theta), np.sin(theta)], -1)
        Z = np.broadcast_to([-a, -ll], A.shape)
        B = _circles(Z, b, A, j, +1)
        D = _circles(Z, c, A, k, -1)
        C = _circles(Z, dd, B, e, +1)
        F = _circles(C, f, D, g, -1)
        return _circles(D, i, F, h, +1)

    P = np.stack([d["foot.G.x [cm]"], d["foot.G.y [cm]"]], -1)
    np.testing.assert_allclose(P, foot(theta), atol=1e-7)  # cm; frames written to 1e-10 cm, solver 1e-10
    # stride and lift (67.91 and 22.46 cm) of the closed-form path sampled every 0.01 deg; the
    # file's 1-deg samples miss the extremes by < 0.02 cm
    G = foot(np.radians(np.arange(0, 360, 0.01)))
    assert np.ptp(P[:, 0]) == pytest.approx(np.ptp(G[:, 0]), abs=0.02)
    assert np.ptp(P[:, 1]) == pytest.approx(np.ptp(G[:, 1]), abs=0.02)
    assert 60 < np.ptp(G[:, 0]) < 75 and 20 < np.ptp(G[:, 1]) < 25  # the leg's familiar proportions
    low = P[:, 1] < P[:, 1].min() + 1.0  # the flat bottom: within 1 cm of the lowest point
    assert low.mean() > 0.4 and np.ptp(P[low, 0]) > 55
