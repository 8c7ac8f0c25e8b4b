"""The study fast path's core: variants of one mechanism as arrays over variants
(linkcli/core/variant_sweep.py), checked against the whole-mechanism functions it stands in for.

Truth: for each variant, the nominal CompiledMechanism with that variant's frame arrays
(``variant_mechanism``) run through sweep.py's kernel model builder and ``solve_sweep``
(method "many": the compiled path with the numpy first point), forward.link_poses /
frame_positions and planar_metrics.fourbar_loops / transmission_angle. Mechanisms: the
four-bar (one loop), Watt's six-bar (two loops), the slider-crank (a prismatic passive joint).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kin_helpers import mech_from_yaml

REPO = Path(__file__).resolve().parent.parent
FILES = ["fourbar.yaml", "watt_sixbar.yaml", "slider_crank.yaml"]


def _variants(mech, n: int, spread: float, seed: int = 0):
    """n variants whose every frame and joint-frame origin moves by up to ``spread`` x the
    mechanism size in x and y (independently: the kinematic functions take the arrays as given)."""
    from linkcli.core.loop_closure import mechanism_size

    rng = np.random.default_rng(seed)
    L = mechanism_size(mech)
    out = []
    for name in ("T_link_frame", "T_parent_joint", "T_child_joint"):
        a = np.repeat(getattr(mech, name)[None], n, axis=0)
        a[..., :2, 3] += rng.uniform(-spread, spread, a[..., :2, 3].shape) * L
        out.append(a)
    return out


def _path(mech, n: int = 73):
    a = np.linspace(0.0, 2 * np.pi, n)
    return np.ascontiguousarray(mech.q_init[mech.q_actuated] + a[:, None])  # one turn of the input


@pytest.fixture(params=FILES)
def mech(request):
    pytest.importorskip("numba")
    return mech_from_yaml((REPO / "mechanisms" / request.param).read_text(encoding="utf-8"))


def test_batched_kernel_model_equals_sweep_py_for_every_variant(mech, monkeypatch):
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    from linkcli.core.variant_sweep import VariantKernel

    vk = VariantKernel(mech)
    g = vk.geometry(*_variants(mech, 6, 0.01))
    assert vk.check(g) == ""  # bit for bit: stepf, loopf, scale, the packed floats and ints, the spacing
    # a variant with a joint frame lifted out of the plane is not planar: it says so, and check agrees
    TL, TP, TC = _variants(mech, 3, 0.01, seed=1)
    TP[1, 0, 2, 3] = 0.5
    g = vk.geometry(TL, TP, TC)
    assert g.planar.tolist() == [True, False, True]
    assert vk.check(g) == ""


def test_kernel_sweeps_equal_solve_sweep(mech, monkeypatch):
    """Same statuses; q within 1e-9 rad or m: both converge each point to 1e-10 of the
    mechanism's size (m) or rad, and the first point differs only in rounding (Newton in the
    kernel instead of numpy: ~1e-15 measured)."""
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    from linkcli.core.sweep import solve_sweep
    from linkcli.core.variant_sweep import VariantKernel, variant_mechanism

    vk = VariantKernel(mech)
    arrays = _variants(mech, 5, 0.01)
    g = vk.geometry(*arrays)
    path = _path(mech)
    clean = 0
    for v in range(5):
        mine = vk.sweep(g, v, path, mech.q_init, 1e-10)
        clean += mine.clean
        ref = solve_sweep(variant_mechanism(mech, *(a[v] for a in arrays)), path, mech.q_init, method="many")
        assert np.array_equal(mine.status, ref.status)
        if mine.clean:
            assert np.abs(mine.q - ref.q).max() < 1e-9
            assert np.allclose(mine.residual, ref.residual, rtol=0, atol=1e-9)
    assert clean >= 4  # 1 % changes of a mechanism far from its limits: (nearly) all clean


def test_a_variant_that_does_not_assemble_is_not_clean(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    from linkcli.core.loop_closure import Status
    from linkcli.core.sweep import solve_sweep
    from linkcli.core.variant_sweep import VariantKernel, variant_mechanism

    mech = mech_from_yaml((REPO / "mechanisms" / "fourbar.yaml").read_text(encoding="utf-8"))
    TL, TP, TC = _variants(mech, 2, 0.0)
    B = mech.joint_index("B")
    TP[1, B, 0, 3] = 1.0  # coupler 1.0: the crank no longer turns fully (not Grashof), points fail
    vk = VariantKernel(mech)
    g = vk.geometry(TL, TP, TC)
    path = _path(mech)
    assert vk.sweep(g, 0, path, mech.q_init, 1e-10).clean
    bad = vk.sweep(g, 1, path, mech.q_init, 1e-10)
    assert not bad.clean and (bad.status != Status.CONVERGED).any()
    ref = solve_sweep(variant_mechanism(mech, TL[1], TP[1], TC[1]), path, mech.q_init, method="many")
    assert (ref.status != Status.CONVERGED).any()  # the general path, which callers take, fails there too


def test_batched_kinematics_equal_the_general_functions(mech, monkeypatch):
    """Link poses, frame positions, four-bar lengths and transmission angles of all variants at
    once equal forward.py's and planar_metrics.py's for each variant: the same formulas on
    (x, y, c, s) instead of 4x4 poses, so to rounding (1e-12 of the 1-10 m mechanisms)."""
    monkeypatch.delenv("LINKCLI_NO_JIT", raising=False)
    from linkcli.core.forward import frame_positions, link_poses
    from linkcli.core.planar_metrics import fourbar_loops, transmission_angle
    from linkcli.core.variant_sweep import VariantKernel, variant_mechanism

    vk = VariantKernel(mech)
    arrays = _variants(mech, 4, 0.01)
    g = vk.geometry(*arrays)
    path = _path(mech, 19)
    q = np.stack([vk.sweep(g, v, path, mech.q_init, 1e-10).q for v in range(4)])
    poses = vk.link_poses(g, q)
    frames = list(range(mech.n_frames))
    xy = vk.frame_positions(g, poses, frames)
    lengths = vk.fourbar_lengths(g)
    for v in range(4):
        m = variant_mechanism(mech, *(a[v] for a in arrays))
        T = link_poses(m, q[v])
        assert np.allclose(poses[v][..., 0], T[..., 0, 3], atol=1e-12)
        assert np.allclose(poses[v][..., 1], T[..., 1, 3], atol=1e-12)
        assert np.allclose(poses[v][..., 2], T[..., 0, 0], atol=1e-12)
        assert np.allclose(poses[v][..., 3], T[..., 1, 0], atol=1e-12)
        assert np.allclose(xy[v], frame_positions(m, T)[..., :2], atol=1e-12)
        loops = fourbar_loops(m)
        assert [lp.joints for lp in loops] == [lp.joints for lp in vk.loops]
        for i, lp in enumerate(loops):
            assert np.allclose(lengths[v, i], lp.lengths, rtol=0, atol=1e-12)
            assert np.allclose(vk.transmission_angles(g, poses, i)[v], transmission_angle(m, lp, q[v]), atol=1e-12)
