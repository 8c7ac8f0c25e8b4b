"""The fast kinematics paths against the reference ones.

* forward.tree_kinematics (one generic implementation: pre-composed link patterns, link-major
  storage, optional ``jacobian_links``) against a frozen copy of the straightforward version it
  replaced (below), and loop_closure's constraint Jacobian against the link-Jacobian formula;
* the sweep kernel (linkcli.core.sweep_kernel, the one continuation algorithm) compiled
  against the same code interpreted (sweep._interpreted_kernel's plain-Python copy in this
  process, and LINKCLI_NO_JIT=1 in a subprocess): same statuses and events, q within the
  solver tolerance, on a full-turn crank-rocker, a double-rocker whose crank cannot turn fully
  (no_assembly stretches and reassembly), the Watt six-bar (two loops), a slider-crank with
  angled frames and an inverted prismatic joint, and spatial models (RSSR: wide J_p; a planar
  four-bar written as a spatial file and the coupling rod: tall J_p);
* the kernel's model evaluation (planar and spatial) against loop_closure.constraints and
  finite differences;
* 721-point sweeps against the numpy continuation the kernel replaced (its results frozen in
  tests/data/sweeps_numpy_path.npz);
* the four-bar against its closed form (circle intersection) in both assembly modes;
* the rule deciding compiled or interpreted kernel, and that numba is imported only then.

No timing assertions here: benchmarks/bench_kinematics.py measures.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linkcli.compile import compile_mechanism
from linkcli.core import forward, loop_closure, sweep
from linkcli.core import transforms as tf
from linkcli.core.forward import TreeKinematics
from linkcli.core.loop_closure import Status
from linkcli.io.loader import load_mechanism

REPO = Path(__file__).resolve().parent.parent
PERF = REPO / "tests" / "data" / "perf"
HAVE_NUMBA = importlib.util.find_spec("numba") is not None and not os.environ.get("LINKCLI_NO_JIT")
needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba not installed (or LINKCLI_NO_JIT set)")


def load(path) -> object:
    return compile_mechanism(load_mechanism(str(path)).model)


def mech_file(name: str) -> Path:
    """A mechanism of mechanisms/ if present, else the perf-test copy (the PUMA)."""
    for p in (REPO / "mechanisms" / name, PERF / name):
        if p.exists():
            return p
    pytest.skip(f"{name} not available")


# --- frozen reference: the tree pass before the fast path (commit 93afc38) -----------------------
def _ref_joint_motions(mech, q):
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    E = tf.elementary_motion(mech.q_axis, mech.q_is_rotation, q)
    M = np.broadcast_to(np.eye(4), batch + (mech.n_joints, 4, 4)).copy()
    P = np.empty(batch + (mech.n_q, 4, 4))
    for j in range(mech.n_joints):
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        acc = np.broadcast_to(np.eye(4), batch + (4, 4))
        for k in range(s, s + n):
            P[..., k, :, :] = acc
            acc = acc @ E[..., k, :, :]
        M[..., j, :, :] = acc
    return M, P


def _ref_unit_twists(mech, T_axis, s, n):
    R = T_axis[..., s:s + n, :3, :3]
    p = T_axis[..., s:s + n, :3, 3]
    a = np.einsum("...ij,...j->...i", R, mech.q_axis[s:s + n])
    rot = mech.q_is_rotation[s:s + n][:, None]
    w = np.where(rot, a, 0.0)
    v = np.where(rot, np.cross(p, a), a)
    return np.swapaxes(np.concatenate([v, w], axis=-1), -1, -2)


def _ref_tree_kinematics(mech, q, jacobian=True) -> TreeKinematics:
    q = np.asarray(q, dtype=float)
    batch = q.shape[:-1]
    M, P = _ref_joint_motions(mech, q)
    T = np.empty(batch + (mech.n_links, 4, 4))
    T[..., 0, :, :] = np.eye(4)
    T_axis = np.empty(batch + (mech.n_q, 4, 4))
    J = np.zeros(batch + (mech.n_links, 6, mech.n_q)) if jacobian else None
    Tc_inv = tf.inverse_transform(mech.T_child_joint)
    done = np.zeros(mech.n_joints, dtype=bool)

    def axes(j, T_jp):
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        for k in range(s, s + n):
            T_axis[..., k, :, :] = T_jp @ P[..., k, :, :]

    for v in mech.link_order[1:]:
        u, j = mech.link_tree_parent[v], mech.link_tree_joint[v]
        if mech.link_tree_forward[v]:
            T_jp = T[..., u, :, :] @ mech.T_parent_joint[j]
            T[..., v, :, :] = T_jp @ M[..., j, :, :] @ Tc_inv[j]
        else:
            T_jc = T[..., u, :, :] @ mech.T_child_joint[j]
            T_jp = T_jc @ tf.inverse_transform(M[..., j, :, :])
            T[..., v, :, :] = T_jp @ tf.inverse_transform(mech.T_parent_joint[j])
        axes(j, T_jp)
        done[j] = True
        if jacobian:
            J[..., v, :, :] = J[..., u, :, :]
            s, n = mech.joint_q_start[j], mech.joint_q_count[j]
            sign = 1.0 if mech.link_tree_forward[v] else -1.0
            J[..., v, :, s:s + n] += sign * _ref_unit_twists(mech, T_axis, s, n)
    for j in np.flatnonzero(~done):
        axes(j, T[..., mech.joint_parent[j], :, :] @ mech.T_parent_joint[j])
    S = np.swapaxes(_ref_unit_twists(mech, T_axis, 0, mech.n_q), -1, -2)
    return TreeKinematics(T, T_axis, S, J, M)


def _ref_constraint_jacobian(mech, kin, T_A, T_B, phi):
    """The loop Jacobian from the link twist Jacobians (the formula the fast one replaced)."""
    k = mech.loop_joint
    J_B = kin.J_link[..., mech.joint_child[k], :, :]
    J_A = kin.J_link[..., mech.joint_parent[k], :, :].copy()
    for li, j in enumerate(k):
        s, n = mech.joint_q_start[j], mech.joint_q_count[j]
        J_A[..., li, :, s:s + n] += np.swapaxes(kin.S[..., s:s + n, :], -1, -2)
    vel_B = J_B[..., :3, :] - tf.hat(T_B[..., :3, 3]) @ J_B[..., 3:, :]
    vel_A = J_A[..., :3, :] - tf.hat(T_A[..., :3, 3]) @ J_A[..., 3:, :]
    dw = J_B[..., 3:, :] - J_A[..., 3:, :]
    if mech.planar:
        rows = np.concatenate([(vel_B - vel_A)[..., :2, :], dw[..., 2:3, :]], axis=-2)
    else:
        rot = tf.right_jacobian_inv_so3(phi) @ np.swapaxes(T_B[..., :3, :3], -1, -2) @ dw
        rows = np.concatenate([vel_B - vel_A, rot], axis=-2)
    return rows.reshape(rows.shape[:-3] + (mech.n_constraints, mech.n_q))


FK_FILES = ["fourbar.yaml", "slider_crank.yaml", "watt_sixbar.yaml", "puma560.yaml", "rssr_spatial.yaml"]


def fk_mechanisms():
    out = []
    for name in FK_FILES:
        for p in (REPO / "mechanisms" / name, PERF / name):
            if p.exists():
                out.append(p)
                break
    return out + [PERF / "joint_zoo.yaml", PERF / "angled_slider.yaml"]


# --- tree pass ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", fk_mechanisms(), ids=lambda p: p.stem)
@pytest.mark.parametrize("shape", [(), (7,), (2, 3)])
def test_tree_kinematics_equals_reference(path, shape):
    """Identical to 1e-12 (rounding differs only in the order of the products)."""
    mech = load(path)
    q = np.random.default_rng(7).uniform(-3, 3, shape + (mech.n_q,))
    ref, new = _ref_tree_kinematics(mech, q), forward.tree_kinematics(mech, q)
    for name in ("T_world_link", "T_world_axis", "S", "J_link", "M"):
        a, b = getattr(ref, name), getattr(new, name)
        assert a.shape == b.shape, name
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(forward.link_poses(mech, q), ref.T_world_link, rtol=0, atol=1e-12)
    M, P = forward.joint_motions(mech, q)
    M_ref, P_ref = _ref_joint_motions(mech, q)
    np.testing.assert_allclose(M, M_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(P, P_ref, rtol=0, atol=1e-12)
    T_ref = ref.T_world_link[..., mech.frame_link[mech.effector_frame], :, :] \
        @ mech.T_link_frame[mech.effector_frame] @ mech.T_frame_tool
    np.testing.assert_allclose(forward.effector_pose(mech, new.T_world_link), T_ref, rtol=0, atol=1e-12)
    assert forward.tree_kinematics(mech, q, jacobian=False).J_link is None


@pytest.mark.parametrize("path", fk_mechanisms(), ids=lambda p: p.stem)
def test_jacobian_links_are_rows_of_the_full_jacobian(path):
    mech = load(path)
    q = np.random.default_rng(3).uniform(-3, 3, (5, mech.n_q))
    full = forward.tree_kinematics(mech, q).J_link
    links = [mech.n_links - 1, 0, mech.n_links // 2]
    part = forward.tree_kinematics(mech, q, jacobian_links=links).J_link
    assert part.shape == (5, 3, 6, mech.n_q)
    np.testing.assert_array_equal(part, full[:, links])
    assert forward.tree_kinematics(mech, q, jacobian_links=[]).J_link.shape == (5, 0, 6, mech.n_q)


def test_puma_effector_jacobian_path_equals_reference():
    """The W2 path (one tree pass, effector row only) against the reference tree pass and a
    textbook DH computation."""
    from linkcli.core.jacobian import _point_jacobian, geometric_jacobian

    mech = load(mech_file("puma560.yaml"))
    q = np.random.default_rng(11).uniform(-np.pi, np.pi, (200, 6))
    eff = mech.frame_link[mech.effector_frame]
    kin = forward.tree_kinematics(mech, q, jacobian_links=[eff])
    T = forward.effector_pose(mech, kin.T_world_link)
    J = _point_jacobian(kin.J_link[:, 0], T[:, :3, 3])
    ref = _ref_tree_kinematics(mech, q)
    T_ref = ref.T_world_link[:, eff] @ mech.T_link_frame[mech.effector_frame] @ mech.T_frame_tool
    np.testing.assert_allclose(T, T_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(J, _point_jacobian(ref.J_link[:, eff], T_ref[:, :3, 3]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(geometric_jacobian(mech, q), J, rtol=0, atol=1e-12)
    # textbook: standard DH chain, z axes and origins of the joint frames
    a = np.array([0, 0.4318, 0.0203, 0, 0, 0])
    d = np.array([0, 0, 0.15005, 0.4318, 0, 0])
    alpha = np.radians([90, 0, -90, 90, -90, 0])
    A = tf.dh_standard(q, d, a, alpha)  # (200, 6, 4, 4)
    Tc = np.broadcast_to(np.eye(4), (200, 4, 4))
    z, o = [], []
    for i in range(6):
        z.append(Tc[:, :3, 2])
        o.append(Tc[:, :3, 3])
        Tc = Tc @ A[:, i]
    np.testing.assert_allclose(T, Tc, rtol=0, atol=1e-12)
    Jv = np.stack([np.cross(z[i], Tc[:, :3, 3] - o[i]) for i in range(6)], -1)
    np.testing.assert_allclose(J, np.concatenate([Jv, np.stack(z, -1)], -2), rtol=0, atol=1e-12)


@pytest.mark.parametrize("path", [p for p in fk_mechanisms() if load(p).n_loops], ids=lambda p: p.stem)
def test_constraint_jacobian_equals_link_jacobian_formula(path):
    mech = load(path)
    q = np.random.default_rng(5).uniform(-3, 3, (4, mech.n_q))
    ev = loop_closure.constraints(mech, q)
    T_A, T_B = loop_closure.loop_frames(mech, ev.kin)
    phi = None if mech.planar else tf.log_so3(np.swapaxes(T_A[..., :3, :3], -1, -2) @ T_B[..., :3, :3])
    np.testing.assert_allclose(ev.J, _ref_constraint_jacobian(mech, ev.kin, T_A, T_B, phi), rtol=0, atol=1e-12)
    r, J = loop_closure._residual_jacobian(mech, q)
    np.testing.assert_array_equal(r, ev.r)
    np.testing.assert_allclose(J, ev.J, rtol=0, atol=1e-15)


# --- sweeps: compiled kernel vs numpy path -------------------------------------------------------
def sweep_cases():
    """(id, mechanism file, inputs builder). Inputs start at the assembly estimate's actuated
    values and make one full turn of the input in 0.1 deg steps (0.5 deg for the six-bar)."""
    turn = lambda n: (lambda m: m.q_init[m.q_actuated] + np.linspace(0, 2 * np.pi, n + 1)[:, None])  # noqa: E731
    return [
        ("crank_rocker", REPO / "mechanisms" / "fourbar.yaml", turn(3600)),
        ("double_rocker", PERF / "double_rocker.yaml", turn(3600)),
        ("watt_sixbar", REPO / "mechanisms" / "watt_sixbar.yaml", turn(720)),
        ("angled_slider", PERF / "angled_slider.yaml", turn(720)),
        ("rssr_spatial", REPO / "mechanisms" / "rssr_spatial.yaml", turn(360)),
        ("fourbar_as_spatial", REPO / "mechanisms" / "planar_fourbar_as_spatial.yaml", turn(360)),
        ("coupling_rod", REPO / "mechanisms" / "coupling_rod.yaml", turn(360)),
    ]


def assert_same_sweep(a, b, q_atol=1e-9):
    """Same statuses and events, q within the solver tolerance where converged.

    q_atol: both paths stop at weighted residuals <= tol = 1e-10 (relative to the mechanism
    size, ~4 m here), and the passive Jacobians of these mechanisms have condition numbers
    below ~1e2 at converged points, so converged configurations differ by < ~1e-9 rad or m.
    The condition number and residuals are evaluated at slightly different q (and the
    condition number by different formulas): compared to rtol 1e-5.
    """
    np.testing.assert_array_equal(a.status, b.status)
    ok = a.status == Status.CONVERGED
    np.testing.assert_allclose(b.q[ok], a.q[ok], rtol=0, atol=q_atol)
    np.testing.assert_allclose(b.condition[ok], a.condition[ok], rtol=1e-5)
    assert np.all(a.residual[ok] <= 1e-9) and np.all(b.residual[ok] <= 1e-9)
    np.testing.assert_array_equal(a.worst_loop[~ok], b.worst_loop[~ok])
    assert [(e.index, e.kind, e.loop) for e in a.events] == [(e.index, e.kind, e.loop) for e in b.events]
    for ea, eb in zip(a.events, b.events, strict=True):
        if np.isnan(ea.detail):
            assert np.isnan(eb.detail)
        else:
            assert eb.detail == pytest.approx(ea.detail, rel=1e-5)


@pytest.mark.parametrize("case", sweep_cases(), ids=lambda c: c[0])
def test_compiled_sweep_equals_interpreted(case):
    if not HAVE_NUMBA:
        pytest.skip("numba not installed")
    _, path, inputs = case
    mech = load(path)
    Q = inputs(mech)
    a = sweep._solve_sweep_interpreted(mech, Q, mech.q_init, 1e-10, np.radians(10.0))
    b = sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(10.0))
    assert np.all(a.status == Status.CONVERGED) or "rocker" in case[0]
    assert_same_sweep(a, b)


@needs_numba
def test_double_rocker_reports_its_gaps():
    """The crank of the 4/3/2/3.5 double-rocker assembles only for |A - O4| in [1.5, 5.5]:
    crank angles [18.6, 102.6] and [257.4, 341.4] deg. Both paths report no_assembly when it
    leaves a range and reassemble when it enters the next one."""
    mech = load(PERF / "double_rocker.yaml")
    theta = np.radians(60.0) + np.linspace(0, 2 * np.pi, 721)
    res = sweep._solve_sweep_compiled(mech, theta[:, None], mech.q_init, 1e-10, np.radians(10.0))
    reach = np.sqrt(25.0 - 24.0 * np.cos(theta))
    inside = (reach > 1.5 + 1e-3) & (reach < 5.5 - 1e-3)
    ok = res.status == Status.CONVERGED
    assert ok[inside].all() and not ok[~inside & ((reach < 1.5 - 1e-3) | (reach > 5.5 + 1e-3))].any()
    kinds = [e.kind for e in res.events]
    assert kinds.count("no_assembly") == 2 and kinds.count("reassembled") >= 1
    assert_same_sweep(sweep._solve_sweep_interpreted(mech, theta[:, None], mech.q_init, 1e-10, np.radians(10.0)),
                      res)


def test_kernel_model_kinds():
    """Planar model (SE(2) poses) for planar files, the general one for spatial files, none
    without loops (a serial arm: solve_sweep sets q to the inputs)."""
    assert sweep._kernel_model(load(mech_file("puma560.yaml"))) is None
    assert sweep._kernel_model(load(REPO / "mechanisms" / "rssr_spatial.yaml"))[5].shape[-1] == 3
    assert sweep._kernel_model(load(REPO / "mechanisms" / "fourbar.yaml"))[5].shape[-1] == 2
    arm = load(mech_file("puma560.yaml"))
    Q = arm.q_init[arm.q_actuated] + np.linspace(0, 1, 5)[:, None]
    r = sweep.solve_sweep(arm, Q, arm.q_init)
    assert np.all(r.status == Status.CONVERGED) and r.events == () and r.residual.shape == (5, 0)
    np.testing.assert_array_equal(r.q[:, arm.q_actuated], Q)


def test_kernel_status_codes_match_loop_closure():
    src = (REPO / "linkcli" / "core" / "sweep_kernel.py").read_text()
    assert "CONVERGED, MAX_ITER, NO_ASSEMBLY, BRANCH_JUMP = 0, 1, 2, 3" in src
    assert (Status.CONVERGED, Status.MAX_ITER, Status.NO_ASSEMBLY, Status.BRANCH_JUMP) == (0, 1, 2, 3)
    assert "_ACCEPT = 1.0 - 1e-12" in src and loop_closure._ACCEPT == 1.0 - 1e-12


def test_continuation_rules_are_stated_once():
    """The sweep kernel takes the continuation's acceptance tests from core/continuation.py
    (where the mutation tests plant their bugs) and calls every rule; neither it nor sweep.py
    restates a threshold."""
    import ast

    from linkcli.core import continuation

    rules = [n for n, v in vars(continuation).items() if callable(v) and getattr(v, "__module__", "") ==
             continuation.__name__]
    assert set(rules) == {"corrector_left_branch", "det_sign_flipped", "fine_point_left_branch",
                          "det_sign_left_branch", "hermite_weights", "predictor_step_limit"}
    for name in ("sweep.py", "sweep_kernel.py"):
        src = (REPO / "linkcli" / "core" / name).read_text()
        for threshold in ("0.3 * moved", "0.25 * span", "* d1 < 0", "2 * t3 - 3 * t2", "t**3"):
            assert threshold not in src, (name, threshold)
        if name == "sweep.py":
            continue
        called = {n.attr for n in ast.walk(ast.parse(src))
                  if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "rules"}
        assert set(rules) <= called, (name, set(rules) - called)


def test_coarse_indices_agree():
    """The kernel's coarse_indices (as plain Python and compiled) == the per-point definition,
    on irregular paths with jumps."""
    rng = np.random.default_rng(2)

    def reference(Q, limit):
        idx = [0]
        for i in range(1, len(Q)):
            if np.any(np.abs(Q[i] - Q[idx[-1]]) > limit) and i - 1 > idx[-1]:
                idx.append(i - 1)
        if idx[-1] != len(Q) - 1:
            idx.append(len(Q) - 1)
        return np.asarray(idx)

    for n_a in (1, 2):
        for _ in range(20):
            Q = np.cumsum(rng.normal(0, 0.05, (int(rng.integers(1, 400)), n_a)) * rng.choice([1, 10], (1, n_a)), 0)
            limit = np.full(n_a, 0.17)
            idx = np.empty(len(Q) + 1, dtype=np.int64)
            count = sweep._compiled_kernel().coarse_indices(Q, limit, idx)
            np.testing.assert_array_equal(idx[:count], reference(Q, limit))
            plain = Path(REPO / "linkcli" / "core" / "sweep_kernel.py")  # the kernel's, as plain Python
            ns: dict = {}
            src = plain.read_text()
            start = src.index("def coarse_indices(")
            exec(src[start:src.index("\n\n\n", start)], ns)
            idx = np.empty(len(Q) + 1, dtype=np.int64)
            np.testing.assert_array_equal(idx[:ns["coarse_indices"](Q, limit, idx)], reference(Q, limit))


# --- the kernel as plain Python == compiled ----------------------------------------------------
_PLAIN_SCRIPT = """
import json, sys, numpy as np
from linkcli.compile import compile_mechanism
from linkcli.core import sweep, jit
from linkcli.io.loader import load_mechanism
assert not jit.jit_enabled()
out = {}
for name, path, n in json.loads(sys.argv[1]):
    mech = compile_mechanism(load_mechanism(path).model)
    Q = mech.q_init[mech.q_actuated] + np.linspace(0, 2 * np.pi, n + 1)[:, None]
    r = sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(10.0))
    out[name] = dict(q=r.q.tolist(), status=r.status.tolist(), condition=r.condition.tolist(),
                     events=[(e.index, e.kind, e.loop) for e in r.events])
print(json.dumps(out))
"""


@needs_numba
def test_plain_python_kernel_equals_compiled():
    """The same kernel functions run as Python (LINKCLI_NO_JIT=1) and compiled: identical
    statuses and events; q to 1e-12 (only libm and operation-order rounding differ)."""
    cases = [("crank_rocker", str(REPO / "mechanisms" / "fourbar.yaml"), 360),
             ("double_rocker", str(PERF / "double_rocker.yaml"), 240),
             ("watt_sixbar", str(REPO / "mechanisms" / "watt_sixbar.yaml"), 120),
             ("rssr_spatial", str(REPO / "mechanisms" / "rssr_spatial.yaml"), 90),
             ("fourbar_as_spatial", str(REPO / "mechanisms" / "planar_fourbar_as_spatial.yaml"), 90)]
    env = {**os.environ, "LINKCLI_NO_JIT": "1", "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", _PLAIN_SCRIPT, json.dumps(cases)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    plain = json.loads(proc.stdout)
    for name, path, n in cases:
        mech = load(path)
        Q = mech.q_init[mech.q_actuated] + np.linspace(0, 2 * np.pi, n + 1)[:, None]
        r = sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(10.0))
        p = plain[name]
        np.testing.assert_array_equal(r.status, p["status"])
        assert [(e.index, e.kind, e.loop) for e in r.events] == [tuple(e) for e in p["events"]]
        np.testing.assert_allclose(r.q, np.array(p["q"]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.condition, p["condition"], rtol=1e-9)


# --- four-bar against the closed form ------------------------------------------------------------
def fourbar_B(theta, sign, d=4.0, a=1.0, b=3.5, c=3.0):
    """Coupler-rocker pin by circle intersection; sign +1: B left of A -> O4."""
    A = np.stack([a * np.cos(theta), a * np.sin(theta)], -1)
    v = np.array([d, 0.0]) - A
    L = np.linalg.norm(v, axis=-1)
    x = (b * b - c * c + L * L) / (2 * L)
    h = np.sqrt(b * b - x * x)
    e = v / L[:, None]
    return A + x[:, None] * e + sign * h[:, None] * np.stack([-e[:, 1], e[:, 0]], -1)


@pytest.mark.parametrize("path_kind", ["interpreted", "compiled"])
@pytest.mark.parametrize("sign", [+1, -1])
def test_fourbar_full_turn_matches_closed_form(path_kind, sign):
    """mechanisms/fourbar.yaml over a full crank turn (3600 points) in both assembly modes.

    Tolerance 1e-8 m: the solver stops at loop residuals below 1e-10 * 4 m (its relative
    tolerance times the mechanism size); the closing pin B is then off by at most the residual
    times the norm of the inverse passive Jacobian, which stays below ~25 on this crank-rocker
    (transmission angle within 40..140 deg), i.e. < 1e-8 m.
    """
    if path_kind == "compiled" and not HAVE_NUMBA:
        pytest.skip("numba not installed")
    mech = load(REPO / "mechanisms" / "fourbar.yaml")
    q0 = mech.q_init.copy()
    if sign < 0:  # the other assembly mode: mirror B about the line A-O4 in the estimate
        q0[1], q0[2], q0[3] = -0.6, 2.0, -1.9
    theta = np.linspace(0, 2 * np.pi, 3601)[:-1]
    solve = sweep._solve_sweep_interpreted if path_kind == "interpreted" else sweep._solve_sweep_compiled
    res = solve(mech, theta[:, None], q0, 1e-10, np.radians(10.0))
    assert np.all(res.status == Status.CONVERGED) and res.events == ()
    B = forward.frame_poses(mech, forward.link_poses(mech, res.q))[:, mech.frame_index("coupler.B"), :2, 3]
    errs = [np.abs(B - fourbar_B(theta, s)).max() for s in (+1, -1)]
    assert min(errs) < 1e-8 and max(errs) > 1e-2  # on one branch all the way round
    assert np.abs(np.diff(res.q, axis=0)).max() < 0.01  # continuous angles, no jumps


# --- compiled or interpreted kernel -------------------------------------------------------------
def test_dispatch_rule(monkeypatch, tmp_path):
    """jit.py's rules: never without numba / with LINKCLI_JIT=never; always with
    LINKCLI_JIT=always or many sweeps; with a cache, when the projected interpreted time
    (plus this process's rent) pays for loading it; cold, by the recorded ski rental."""
    mech = load(REPO / "mechanisms" / "fourbar.yaml")
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.setattr(sweep, "_compiled_loaded", lambda: False)
    monkeypatch.setattr(sweep, "_rent_in_process", 0.0)
    monkeypatch.setenv("LINKCLI_JIT", "always")
    assert sweep._use_compiled(mech, 10) == HAVE_NUMBA
    monkeypatch.setenv("LINKCLI_JIT", "auto")
    assert sweep._use_compiled(mech, 10, many=True) == HAVE_NUMBA
    per_point = sweep._work_units(mech, 1) * sweep.DEFAULT_SECONDS_PER_UNIT
    from linkcli.core import jit

    load_points = int(jit.COMPILED_LOAD_S / per_point / (1 - 1 / jit.COMPILED_SPEEDUP))
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: True)
    assert not sweep._use_compiled(mech, load_points // 2)
    assert sweep._use_compiled(mech, 2 * load_points) == HAVE_NUMBA
    monkeypatch.setattr(sweep, "_rent_in_process", jit.COMPILED_LOAD_S)  # rent paid: buy
    assert sweep._use_compiled(mech, 10) == HAVE_NUMBA
    monkeypatch.setattr(sweep, "_rent_in_process", 0.0)
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: False)
    compile_points = int(sweep.DEFAULT_COMPILE_S / per_point)
    assert not sweep._use_compiled(mech, compile_points // 4)
    assert sweep._use_compiled(mech, 4 * compile_points) == HAVE_NUMBA
    monkeypatch.setenv("LINKCLI_JIT", "never")
    assert not sweep._use_compiled(mech, 100 * compile_points)
    monkeypatch.setenv("LINKCLI_JIT", "always")
    monkeypatch.setenv("LINKCLI_NO_JIT", "1")
    assert not sweep._use_compiled(mech, 10)


def test_interpreted_rent_leads_to_the_compiled_kernel(monkeypatch, tmp_path):
    """A long-running process making small sweeps pays rent until loading the cached kernel
    is cheaper, then uses it (ski rental within the process)."""
    from linkcli.core import jit

    mech = load(REPO / "mechanisms" / "fourbar.yaml")
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "record.json"))
    monkeypatch.setenv("LINKCLI_JIT", "auto")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    monkeypatch.setattr(sweep, "_compiled_loaded", lambda: False)
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: True)
    monkeypatch.setattr(sweep, "_rent_in_process", 0.0)
    assert not sweep._use_compiled(mech, 50)
    sweep._record_interpreted(mech, 50, 2 * jit.COMPILED_LOAD_S)
    assert sweep._use_compiled(mech, 50) == HAVE_NUMBA
    assert jit.read_record()[sweep.KERNEL_SET]["rent_paid_s"] > 0 or not HAVE_NUMBA
    # cold cache, record unwritable (lost): the process's own rent still leads to compiling
    monkeypatch.setattr(sweep, "_kernel_cached", lambda: False)
    monkeypatch.setenv("LINKCLI_JIT_RECORD", str(tmp_path / "missing" / "dir" / "record.json"))
    monkeypatch.setattr(jit, "_write_record", lambda data: None)
    monkeypatch.setattr(sweep, "_rent_in_process", 0.0)
    assert not sweep._use_compiled(mech, 50)
    sweep._record_interpreted(mech, 50, 2 * sweep.DEFAULT_COMPILE_S)
    assert sweep._use_compiled(mech, 50) == HAVE_NUMBA


@needs_numba
def test_solve_sweep_takes_the_chosen_kernel(monkeypatch):
    from linkcli.core import jit

    mech = load(REPO / "mechanisms" / "fourbar.yaml")
    Q = np.linspace(0, 2 * np.pi, 361)[:, None]
    monkeypatch.setenv("LINKCLI_JIT", "always")
    a = sweep.solve_sweep(mech, Q, mech.q_init)
    monkeypatch.setattr(sweep, "_plan", lambda *args, **kw: jit.Plan(False, False, "interpreted (test)"))
    b = sweep.solve_sweep(mech, Q, mech.q_init)
    assert_same_sweep(b, a)
    np.testing.assert_array_equal(a.q, sweep._solve_sweep_compiled(mech, Q, mech.q_init, 1e-10, np.radians(10.0)).q)
    np.testing.assert_array_equal(b.q, sweep._solve_sweep_interpreted(mech, Q, mech.q_init, 1e-10,
                                                                      np.radians(10.0)).q)


def test_importing_the_sweep_does_not_import_numba():
    code = ("import sys, numpy as np; from linkcli.core import sweep; from linkcli.compile import compile_mechanism; "
            "from linkcli.io.loader import load_mechanism; "
            "m = compile_mechanism(load_mechanism('mechanisms/fourbar.yaml').model); "
            "sweep.solve_sweep(m, np.linspace(0, 6.28, 361)[:, None], m.q_init); print('numba' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), "LINKCLI_JIT": "auto"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
