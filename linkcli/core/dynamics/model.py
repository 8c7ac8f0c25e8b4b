"""The dynamics view of a compiled mechanism: a few packed arrays read by the kernels.

Built once per simulation by :func:`build_model`. A ``DynModel`` (:mod:`.structs`) is a
namedtuple of writable, contiguous float64/int64 arrays (numba compiles one specialisation for
every mechanism), packed by entity with named column/row indices (:mod:`.layout`). Body index
-1 is the base. With ``n_b`` bodies the generalized velocity has ``n = nd * n_b`` entries,
``nd`` = 3 planar ``(v_x, v_y, w_z)`` / 6 spatial ``(v, w)``; world frame, CG velocities.

===========  ===================  =====================================================================
field        shape                content (SI)
===========  ===================  =====================================================================
planar       int                  1 planar, 0 spatial
b_mass       (n_b,)               kg
b_inertia    (n_b, 3, 3)          kg m^2 about the CG, link axes (planar: Izz only)
c_scale      (n,)                 1 (translations) or 1/length (rotations) per generalized coordinate
gravity      (3,)                 m/s^2
ji           (n_j, 5)             J_TYPE, J_PA, J_PB (parent/child body), J_QS, J_QN (variables)
jv           (n_j, 6, 3)          J_RA, J_RB joint-frame origins relative to the CG in body axes (world
                                  for the base); J_AXA, J_N1A, J_N2A the joint axis and two
                                  perpendiculars (right-handed) in parent body axes; J_N1B the first
                                  perpendicular in child body axes
jm           (n_j, 2, 3, 3)       joint-frame rotations in parent / child body axes
q_axis       (n_q, 3)             variable axes (joint frame)
q_rot        (n_q,)               1 rotation, 0 translation
ri, rv       (n_r, 3), (n_r,2,3)  constraint rows, see :mod:`.constraints`
ai, av, ap   (n_a, 2), (n_a,2,3), axial elements: bodies (a, b), points relative to the CG (body axes),
             (n_a, 3)             (K_STIFF N/m, K_FREE m, K_DAMP N s/m)
ti, tp       (n_t, 2), (n_t, 3)   torsional elements: (joint, variable), (N m/rad, rad, N m s/rad)
li, lv       (n_l,), (n_l, 3, 3)  constant loads: body; (L_POINT rel. CG body axes, L_FORCE N,
                                  L_TORQUE N m) world
di           (n_d, 4)             torque drivers: D_JOINT, D_Q, D_DRIVER (profile column), D_ROT
ei, ec       (n_e, 2), (n_e,)     dampers: (E_KIND axial/torsional, E_INDEX element), damping
length       float                m, size of the mechanism (loop_closure.mechanism_size)
f_scale      float                N, force typical of the loads (weights, springs, loads)
===========  ===================  =====================================================================
"""

from __future__ import annotations

import numpy as np

from ..loop_closure import mechanism_size
from ..mechanism import DRIVE_TORQUE, CompiledMechanism
from .bodies import body_links
from .constraints import perpendiculars, row_table
from .layout import AXIAL, TORSIONAL
from .structs import DynModel


def joint_axes(mech: CompiledMechanism) -> np.ndarray:
    """(n_joints, 3) axis of each joint's first variable in joint-frame coordinates (z for
    joints without variables)."""
    axes = np.tile([0.0, 0.0, 1.0], (mech.n_joints, 1))
    has = mech.joint_q_count > 0
    axes[has] = mech.q_axis[mech.joint_q_start[has]]
    return axes


def build_model(mech: CompiledMechanism, mass: np.ndarray, inertia: np.ndarray) -> DynModel:
    """The kernel arrays of ``mech`` with body masses ``mass (n_b,)`` and inertias
    ``inertia (n_b, 3, 3)`` (possibly regularised, see :mod:`.bodies`)."""
    _, link_body = body_links(mech)
    planar = bool(mech.planar)
    fields = dict(planar=int(planar), b_mass=mass, b_inertia=inertia,
                  c_scale=_c_scale(planar, len(mass), mechanism_size(mech)),
                  gravity=mech.gravity, q_axis=mech.q_axis, q_rot=mech.q_is_rotation)
    fields.update(_joints(mech, link_body))
    rows = row_table(mech, joint_axes(mech))
    fields.update(ri=np.column_stack([rows["kind"], rows["joint"], rows["driver"]]).reshape(-1, 3),
                  rv=np.stack([rows["u"], rows["w"]], axis=1).reshape(-1, 2, 3))
    fields.update(_elements(mech, link_body))
    size = mechanism_size(mech)
    fields.update(length=float(size), f_scale=_force_scale(mech, mass, size))
    scalars = ("planar", "length", "f_scale")
    return DynModel(**{k: v if k in scalars else _kernel_array(v) for k, v in fields.items()})


def _force_scale(mech, mass, size) -> float:
    """A force (N) typical of the model's loads, for the integrator's convergence test: the
    weight of all bodies, spring forces at a deflection of the mechanism size (torsional: its
    torque over the size), the constant loads. Motion-dependent forces (constraint reactions,
    inertia) are measured per step by the integrator itself."""
    g = float(np.linalg.norm(mech.gravity))
    f = float(np.sum(mass)) * g
    f += float(np.sum(np.abs(mech.axial_stiffness))) * size
    f += float(np.sum(np.abs(mech.torsional_stiffness))) / size
    loads = mech.load_link > 0
    f += float(np.sum(np.linalg.norm(mech.load_force[loads], axis=-1)))
    f += float(np.sum(np.linalg.norm(mech.load_torque[loads], axis=-1))) / size
    return f



def _c_scale(planar, n_bodies, length) -> np.ndarray:
    """Per generalized coordinate: 1 for translations, ``1/length`` for rotations (1/m); turns
    moments into forces and angles into lengths (divided/multiplied) in the integrator's
    convergence tests."""
    per_body = [1.0, 1.0, 1.0 / length] if planar else [1.0, 1.0, 1.0, 1.0 / length, 1.0 / length, 1.0 / length]
    return np.tile(per_body, n_bodies)


def _joints(mech, link_body) -> dict:
    cg = mech.link_cg
    Ra, Rb = mech.T_parent_joint[:, :3, :3], mech.T_child_joint[:, :3, :3]
    axis = joint_axes(mech)
    pairs = [perpendiculars(a) for a in axis]
    n1 = np.array([p[0] for p in pairs]).reshape(-1, 3)
    n2 = np.array([p[1] for p in pairs]).reshape(-1, 3)
    body_axes = lambda R, v: np.einsum("jab,jb->ja", R, v)  # noqa: E731
    jv = np.stack([mech.T_parent_joint[:, :3, 3] - cg[mech.joint_parent],
                   mech.T_child_joint[:, :3, 3] - cg[mech.joint_child],
                   body_axes(Ra, axis), body_axes(Ra, n1), body_axes(Ra, n2), body_axes(Rb, n1)], axis=1)
    ji = np.column_stack([mech.joint_type, link_body[mech.joint_parent], link_body[mech.joint_child],
                          mech.joint_q_start, mech.joint_q_count])
    return dict(ji=ji.reshape(-1, 5), jv=jv.reshape(-1, 6, 3), jm=np.stack([Ra, Rb], axis=1).reshape(-1, 2, 3, 3))


def _elements(mech, link_body) -> dict:
    cg = mech.link_cg
    fa, fb = mech.axial_frame_a, mech.axial_frame_b
    la, lb = mech.frame_link[fa], mech.frame_link[fb]
    n_ax = len(fa)
    loads = np.flatnonzero(mech.load_link > 0)  # loads on the base do nothing
    ll = mech.load_link[loads]
    tdrv = np.flatnonzero(mech.driver_kind == DRIVE_TORQUE)
    tq = mech.driver_q[tdrv]
    dp_ax, dp_to = np.flatnonzero(mech.axial_damping > 0), np.flatnonzero(mech.torsional_damping > 0)
    return dict(
        ai=np.column_stack([link_body[la], link_body[lb]]).reshape(-1, 2),
        av=np.stack([mech.T_link_frame[fa, :3, 3] - cg[la], mech.T_link_frame[fb, :3, 3] - cg[lb]],
                    axis=1).reshape(n_ax, 2, 3),
        ap=np.column_stack([mech.axial_stiffness, mech.axial_free_length, mech.axial_damping]).reshape(-1, 3),
        ti=np.column_stack([mech.torsional_joint, mech.joint_q_start[mech.torsional_joint]]).reshape(-1, 2),
        tp=np.column_stack([mech.torsional_stiffness, mech.torsional_free_angle,
                            mech.torsional_damping]).reshape(-1, 3),
        li=link_body[ll],
        lv=np.stack([mech.load_point[loads] - cg[ll], mech.load_force[loads], mech.load_torque[loads]],
                    axis=1).reshape(len(loads), 3, 3),
        di=np.column_stack([mech.q_joint[tq], tq, tdrv, mech.q_is_rotation[tq]]).reshape(-1, 4),
        ei=np.column_stack([np.r_[np.full(len(dp_ax), AXIAL), np.full(len(dp_to), TORSIONAL)],
                            np.r_[dp_ax, dp_to]]).reshape(-1, 2),
        ec=np.r_[mech.axial_damping[dp_ax], mech.torsional_damping[dp_to]],
    )


def _kernel_array(value) -> np.ndarray:
    a = np.asarray(value)
    dtype = np.int64 if a.dtype.kind in "biu" else np.float64
    return np.array(a, dtype=dtype, order="C", copy=True)
