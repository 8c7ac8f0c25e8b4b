"""Sweeps of many variants of one planar mechanism that differ only in where frames sit on
their links (a tolerance study's pin positions), through the compiled sweep kernel.

A variant is the nominal :class:`~linkcli.core.mechanism.CompiledMechanism` with other frame
origins: ``T_link_frame``, ``T_parent_joint`` and ``T_child_joint`` (m), given for all variants
at once as arrays with a leading variant dimension ``(n_variants, ...)``
(:class:`VariantGeometry`). Everything the kernel reads that depends on them (the planar tree
steps, the loop frames, the residual scale ``1 / mechanism size``) is derived here for all
variants at once; everything else (topology, axes, passive and actuated sets, the kernel's
integer layout) is the nominal's. :meth:`VariantKernel.check` proves, bit for bit, that this
equals the kernel model :mod:`linkcli.core.sweep` builds for each variant as a whole mechanism
(callers run it once per study; tests/test_study_fast_path.py runs it on random variants).

The first point: ``solve_sweep`` assembles at the estimate's own inputs (``q_start``'s actuated
values, ``assembly.assemble`` with seeded restarts, ~2 ms: ten times the 73-point compiled
sweep) and the kernel follows the branch to the first input. Here the kernel does both: the estimate's inputs are
prepended to the path as a coarse point of its own, so the kernel's first-point assembly
(Newton from ``q_start``) and coarse continuation (tangent predictor, corrector, bisection)
carry the branch to the first input -- the same algorithm as ``solve_sweep``'s first point when Newton from
the estimate converges and the continuation needs no restart (equal to rounding: ~1e-15 rad
measured); the rows are then shifted by the whole turns that bring the assembly at the
estimate's inputs nearest the estimate, as ``solve_sweep`` takes it (the whole-turn rule:
Newton from a poor estimate can converge whole turns away). ``VariantSweep.clean`` says where
that holds and nothing else happened that an analysis reports (every point converged, no
reassembly, no sign change of det J_p, no singular point); callers take the general path
(``solve_sweep`` and the full analysis) for the others.

Figures of the variants come from :meth:`VariantKernel.link_poses`,
:meth:`~VariantKernel.frame_positions` and :meth:`~VariantKernel.transmission_angles`: the
planar pass that result tables use (forward.planar_link_poses / planar_frame_positions,
planar_metrics.transmission_angle_planar) with the variants' frames as arrays over variants,
because building a compiled mechanism and its forward plan per variant costs ~2 ms;
tests/test_study_fast_path.py checks them against the 4x4 functions on random variants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from . import continuation as rules
from .forward import planar_frame_positions, planar_frames, planar_inverse, planar_link_poses
from .loop_closure import SINGULAR_CONDITION, Status
from .mechanism import CompiledMechanism
from .planar_metrics import transmission_angle_planar


@dataclass(frozen=True)
class VariantSweep:
    """Outcome of one variant's sweep over n points (the prepended start point removed): q
    (n, n_q) SI, status (n,), residual (n, n_loops), condition (n,), det (n,) sign of det J_p,
    and ``clean``: see the module docstring (False: take the general path for this variant)."""

    q: np.ndarray
    status: np.ndarray
    residual: np.ndarray
    condition: np.ndarray
    det: np.ndarray
    clean: bool


@dataclass(frozen=True)
class VariantGeometry:
    """Frame arrays of n_variants variants (m): T_link_frame (V, n_frames, 4, 4), T_parent_joint
    and T_child_joint (V, n_joints, 4, 4); derived: fP, fC (V, n_joints, 4) planar joint frames
    (x, y, c, s); size (V,) mechanism size (m); mf (V, n_mf) the kernel's packed floats; planar
    (V,) bool: the variant's joint frames are planar poses (else it cannot use the kernel)."""

    T_link_frame: np.ndarray
    T_parent_joint: np.ndarray
    T_child_joint: np.ndarray
    fP: np.ndarray
    fC: np.ndarray
    size: np.ndarray
    mf: np.ndarray
    planar: np.ndarray

    def __len__(self) -> int:
        return len(self.size)


def variant_mechanism(mech: CompiledMechanism, T_link_frame: np.ndarray, T_parent_joint: np.ndarray,
                      T_child_joint: np.ndarray) -> CompiledMechanism:
    """The nominal ``mech`` with one variant's frame arrays (kinematics only: mass properties,
    loads and springs stay the nominal's, so use it for position analyses)."""
    return replace(mech, T_link_frame=T_link_frame, T_parent_joint=T_parent_joint, T_child_joint=T_child_joint)


def mechanism_sizes(T_link_frame: np.ndarray, T_parent_joint: np.ndarray, T_child_joint: np.ndarray) -> np.ndarray:
    """``loop_closure.mechanism_size`` of every variant (n_variants,) m: the largest frame or
    joint offset, at least 1e-3."""
    offsets = np.concatenate([T_link_frame[:, :, :3, 3], T_parent_joint[:, :, :3, 3], T_child_joint[:, :, :3, 3]],
                             axis=1)
    return np.maximum(np.abs(offsets).max(axis=(1, 2), initial=0.0), 1e-3)


class VariantKernel:
    """The compiled sweep of variants of one nominal mechanism (see the module docstring).
    Build once per study and process."""

    def __init__(self, mech: CompiledMechanism, max_step: float = np.radians(10.0)) -> None:
        from . import sweep as sw
        from . import sweep_kernel as pk
        from .planar_metrics import fourbar_loops

        self.mech = mech
        self.nominal_model = sw._planar_model(mech)
        if self.nominal_model is None or not mech.n_joints or not sw._square(mech):
            # (the per-variant model is the planar one; ``clean`` reads the square J_p's det signs)
            raise ValueError("the variant sweep needs a planar mechanism with a square passive partition")
        if not np.all(mech.q_is_rotation[mech.q_actuated]):
            # a prismatic input's coarse spacing and value checks depend on the mechanism size
            raise ValueError("an actuated variable is a translation")
        self.max_step = float(max_step)
        self.max_depth = rules.MAX_DEPTH
        self.limit = np.full(mech.n_actuated, self.max_step)  # coarse spacing: max_step rad per input
        self.mi, mf, self.n_wf, self.n_wi = pk.pack(self.nominal_model, self.max_depth)
        self.n_mf = len(mf)
        order = [int(v) for v in mech.link_order[1:]]
        self._steps = [(v, int(mech.link_tree_parent[v]), int(mech.link_tree_joint[v]),
                        bool(mech.link_tree_forward[v])) for v in order]
        self._step_joint = np.array([j for _, _, j, _ in self._steps], dtype=int)
        self._step_forward = np.array([f for _, _, _, f in self._steps], dtype=bool)
        self.loops = fourbar_loops(mech)  # topology only: lengths come per variant
        rot = np.array(mech.q_is_rotation, dtype=bool)
        rot[mech.q_actuated] = False
        self._turn_cols = np.flatnonzero(rot).tolist()  # passive rotation variables (whole-turn rule)

    # -- geometry ---------------------------------------------------------------------------
    def geometry(self, T_link_frame: np.ndarray, T_parent_joint: np.ndarray,
                 T_child_joint: np.ndarray) -> VariantGeometry:
        """The derived arrays of variants given by their frame arrays (see VariantGeometry)."""
        V = len(T_link_frame)
        fP, fC = planar_frames(T_parent_joint), planar_frames(T_child_joint)
        if fP is None or fC is None:  # some variant is not planar: find which (zeros stand in for its frames)
            fP, fC = np.zeros((V, self.mech.n_joints, 4)), np.zeros((V, self.mech.n_joints, 4))
            ok = np.zeros(V, dtype=bool)
            for v in range(V):
                p, c = planar_frames(T_parent_joint[v]), planar_frames(T_child_joint[v])
                if p is not None and c is not None:
                    fP[v], fC[v], ok[v] = p, c, True
        else:
            ok = np.ones(V, dtype=bool)
        stepi, _, loopi, _, vrot, vax, cA, cB, passive, act, _ = self.nominal_model
        fPi, fCi = planar_inverse(fP), planar_inverse(fC)
        j, fwd = self._step_joint, self._step_forward[None, :, None]
        before = np.where(fwd, fP[:, j], fC[:, j])
        after = np.where(fwd, fCi[:, j], fPi[:, j])
        stepf = np.concatenate([before, after], axis=-1)  # (V, n_steps, 8)
        lj = self.mech.loop_joint
        loopf = np.concatenate([fP[:, lj], fC[:, lj]], axis=-1)  # (V, n_loops, 8)
        L = mechanism_sizes(T_link_frame, T_parent_joint, T_child_joint)
        per_loop = np.stack([1 / L, 1 / L, np.ones_like(L)], axis=-1)  # loop_closure._residual_scale
        scale = np.tile(per_loop, (1, self.mech.n_loops))
        const = [np.broadcast_to(np.asarray(a, dtype=np.float64).ravel(), (V, np.asarray(a).size))
                 for a in (vax, cA, cB)]
        # sweep_kernel.pack's float layout: stepf, loopf, vax, cA, cB, scale (check() proves it)
        mf = np.ascontiguousarray(np.concatenate([stepf.reshape(V, -1), loopf.reshape(V, -1), *const, scale], axis=1))
        return VariantGeometry(T_link_frame, T_parent_joint, T_child_joint, fP, fC, L, mf, ok)

    def model(self, g: VariantGeometry, v: int):
        """The kernel model tuple (``sweep._planar_model``'s layout) of variant v."""
        stepi, _, loopi, _, vrot, vax, cA, cB, passive, act, _ = self.nominal_model
        n_s, n_l = len(stepi), len(loopi)
        mf = g.mf[v]
        stepf = mf[:8 * n_s].reshape(n_s, 8)
        loopf = mf[8 * n_s:8 * (n_s + n_l)].reshape(n_l, 8)
        scale = mf[len(mf) - 3 * n_l:]
        return (stepi, np.ascontiguousarray(stepf), loopi, np.ascontiguousarray(loopf), vrot, vax, cA, cB, passive,
                act, np.ascontiguousarray(scale))

    def check(self, g: VariantGeometry) -> str:
        """'' when the derived arrays of every variant in ``g`` equal, bit for bit, what
        sweep.py and sweep_kernel.pack build for it as a whole mechanism; else what differs."""
        from . import sweep as sw
        from . import sweep_kernel as pk

        for v in range(len(g)):
            mech = variant_mechanism(self.mech, g.T_link_frame[v], g.T_parent_joint[v], g.T_child_joint[v])
            full = sw._planar_model(mech)
            if (full is None) != (not g.planar[v]):
                return f"variant {v}: planar {bool(g.planar[v])} here, {full is not None} in sweep.py"
            if full is None:
                continue
            mine = self.model(g, v)
            if len(mine) != len(full):
                return f"variant {v}: the kernel model has {len(full)} parts, {len(mine)} here"
            for k, (a, b) in enumerate(zip(mine, full, strict=True)):
                a, b = np.asarray(a), np.asarray(b)
                if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b):
                    return f"variant {v}: part {k} of the kernel model differs"
            mi, mf, n_wf, n_wi = pk.pack(full, self.max_depth)
            if not (np.array_equal(mi, self.mi) and np.array_equal(mf, g.mf[v]) and (n_wf, n_wi) == (self.n_wf,
                                                                                                      self.n_wi)):
                return f"variant {v}: the packed kernel model differs"
            if not np.array_equal(sw._input_step_limit(mech, self.max_step), self.limit):
                return f"variant {v}: the coarse-point spacing differs"
        return ""

    # -- the sweep ----------------------------------------------------------------------------
    def sweep(self, g: VariantGeometry, v: int, Q_act: np.ndarray, q_start: np.ndarray, tol: float) -> VariantSweep:
        """Variant v's sweep along Q_act (n, n_act) SI from the estimate q_start (n_q,)."""
        from . import sweep as sw
        from . import sweep_kernel as pk

        n, n_q, n_l = len(Q_act), self.mech.n_q, self.mech.n_loops
        Q = np.empty((n + 1, Q_act.shape[1]))
        Q[0] = q_start[self.mech.q_actuated]
        Q[1:] = Q_act
        idx = np.empty(n + 1, dtype=np.int64)
        count = pk.coarse_indices(Q[1:], self.limit, idx)
        coarse = np.empty(count + 1, dtype=np.int64)
        coarse[0] = 0  # the estimate's own inputs: a coarse point before the path's
        coarse[1:] = idx[:count] + 1
        wf, wi = pk.workspace(self.n_wf, self.n_wi)
        q = np.empty((n + 1, n_q))
        status = np.zeros(n + 1, dtype=np.int64)
        resid = np.empty((n + 1, n_l))
        worst = np.zeros(n + 1, dtype=np.int64)
        cond = np.empty(n + 1)
        det = np.zeros(n + 1)
        reassembled = np.zeros(n + 1, dtype=np.bool_)
        pk.sweep(self.mi, g.mf[v], wf, wi, Q, np.array(q_start, dtype=np.float64), coarse, float(tol), rules.MAX_ITER,
                 q, status, resid, worst, cond, det, reassembled)
        first, est = q[0].tolist(), q_start.tolist()
        if status[0] == Status.CONVERGED and any(abs(first[k] - est[k]) > math.pi for k in self._turn_cols):
            # the whole-turn rule of solve_sweep's first point (assembled at the estimate's own
            # inputs: passive angles nearest the estimate), the run continued from it shifted
            # alike (only when some angle is more than half a turn away: the common case costs
            # this test, a few Python operations, instead of the shift's numpy calls)
            sw._shift_turns(self.mech, q, 0, n + 1, q_start)
        clean = bool(np.all(status == Status.CONVERGED) and not reassembled.any()
                     and det[1] != 0.0 and np.all(det[1:] == det[1]) and np.all(cond[1:] <= SINGULAR_CONDITION))
        return VariantSweep(q[1:], status[1:], resid[1:], cond[1:], det[1:], clean)

    def points(self, g: VariantGeometry, v: int):
        """Variant v's :class:`linkcli.core.extremes.KernelPoints` (single configurations and input
        rates in the compiled kernel with the variant's packed floats)."""
        from . import sweep_kernel as pk
        from .extremes import KernelPoints

        return KernelPoints(self.mech, pk, self.mi, g.mf[v], self.n_wf, self.n_wi)

    # -- kinematics of the variants -----------------------------------------------------------
    def link_poses(self, g: VariantGeometry, q: np.ndarray) -> np.ndarray:
        """(x, y, c, s) world poses (V, n, n_links, 4) of every link at q (V, n, n_q) SI
        (:func:`~linkcli.core.forward.planar_link_poses` with the variants' joint frames)."""
        return planar_link_poses(self.mech, q, (g.fP[:, None], g.fC[:, None]))

    def frame_positions(self, g: VariantGeometry, poses: np.ndarray, frames) -> np.ndarray:
        """World (x, y) (V, n, len(frames), 2) m of frames (indices) from link poses
        (:func:`~linkcli.core.forward.planar_frame_positions` with the variants' frames)."""
        return planar_frame_positions(self.mech, poses, frames, g.T_link_frame[:, None])

    def _centre(self, g: VariantGeometry, j: int, link: int) -> np.ndarray:
        """Joint j's centre (V, 2) m in the frame of ``link`` (planar_metrics._joint_centre)."""
        T = g.T_parent_joint if self.mech.joint_parent[j] == link else g.T_child_joint
        return T[:, j, :2, 3]

    def fourbar_lengths(self, g: VariantGeometry) -> np.ndarray:
        """(V, n_fourbar_loops, 4) lengths (ground, input, coupler, output) m of the nominal's
        four-bar loops (planar_metrics.fourbar_loops) in every variant."""
        out = np.empty((len(g), len(self.loops), 4))
        for i, lp in enumerate(self.loops):
            j0, j1, j2, j3 = lp.joints
            _, l1, l2, l3 = lp.links
            pairs = ((j0, j3, 0), (j0, j1, l1), (j1, j2, l2), (j2, j3, l3))
            for k, (a, b, link) in enumerate(pairs):
                out[:, i, k] = np.linalg.norm(self._centre(g, a, link) - self._centre(g, b, link), axis=-1)
        return out

    def transmission_angles(self, g: VariantGeometry, poses: np.ndarray, i: int) -> np.ndarray:
        """Transmission angle (V, n) rad of four-bar loop i
        (:func:`~linkcli.core.planar_metrics.transmission_angle_planar` with the variants' frames)."""
        return transmission_angle_planar(self.mech, self.loops[i], poses, g.T_parent_joint[:, None],
                                         g.T_child_joint[:, None])


__all__ = ["VariantKernel", "VariantSweep", "VariantGeometry", "variant_mechanism", "mechanism_sizes"]
