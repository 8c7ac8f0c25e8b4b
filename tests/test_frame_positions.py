"""Frame origins without 4x4 frame products (forward.frame_positions) and the planar form of the
tree (forward.planar_steps) that the compiled sweep kernel is built from.

Truths: the general 4x4 products ``frame_poses`` (independent code path: batched matrix
products) and, for the planar tree, composing the planar steps as 4x4 matrices must give the
link poses of the general tree pass. Tolerances: a few ulp of the mechanism size (both sides
round differently; 1e-12 m on mechanisms of size <= 10 m leaves a 100x margin over 1e-14).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kin_helpers import mech_from_yaml

from linkcli.core import forward

MECHANISMS = sorted((Path(__file__).resolve().parent.parent / "mechanisms").glob("*.yaml"))


@pytest.mark.parametrize("path", MECHANISMS, ids=lambda p: p.stem)
def test_frame_positions_equal_frame_pose_origins(path):
    mech = mech_from_yaml(path.read_text(encoding="utf-8"), str(path))
    q = np.random.default_rng(1).normal(size=(7, 3, mech.n_q))  # two batch dimensions
    T = forward.link_poses(mech, q)
    p = forward.frame_positions(mech, T)
    assert p.shape == (7, 3, mech.n_frames, 3)
    np.testing.assert_allclose(p, forward.frame_poses(mech, T)[..., :3, 3], rtol=0, atol=1e-12)


def _matrix(x, y, c, s):
    return np.array([[c, -s, 0, x], [s, c, 0, y], [0, 0, 1, 0], [0, 0, 0, 1.0]])


@pytest.mark.parametrize("path", MECHANISMS, ids=lambda p: p.stem)
def test_planar_steps_rebuild_the_link_poses(path):
    mech = mech_from_yaml(path.read_text(encoding="utf-8"), str(path))
    planar = forward.planar_steps(mech)
    if not mech.planar:
        assert planar is None
        return
    assert planar is not None  # every planar example is planar in SE(2)
    steps, axes = planar
    q = np.random.default_rng(2).normal(size=mech.n_q)
    T_ref = forward.link_poses(mech, q)
    T = [np.eye(4)] * mech.n_links
    for st in steps:
        acc = T[st.u] @ _matrix(*st.before)
        ks = range(st.s, st.s + st.n) if st.forward else range(st.s + st.n - 1, st.s - 1, -1)
        sign = 1.0 if st.forward else -1.0
        for k in ks:
            if mech.q_is_rotation[k]:
                a = sign * axes[k, 0] * q[k]
                acc = acc @ _matrix(0.0, 0.0, np.cos(a), np.sin(a))
            else:
                acc = acc @ _matrix(sign * q[k] * axes[k, 0], sign * q[k] * axes[k, 1], 1.0, 0.0)
        T[st.v] = acc @ _matrix(*st.after)
    np.testing.assert_allclose(np.array(T), T_ref, rtol=0, atol=1e-12)


def test_spatial_frames_are_not_planar():
    T = np.eye(4)
    T[2, 3] = 1e-6  # out of the plane
    assert forward.planar_frames(T) is None
    R = np.eye(4)
    R[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]  # rotation about x
    assert forward.planar_frames(R) is None
    ok = np.eye(4)
    ok[:2, 3] = (0.5, -2.0)
    np.testing.assert_array_equal(forward.planar_frames(ok), [0.5, -2.0, 1.0, 0.0])
