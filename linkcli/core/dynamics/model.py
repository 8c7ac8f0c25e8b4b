"""The dynamics view of a compiled mechanism: a few packed arrays read by the kernels.

Built once per simulation by :func:`build_model`. A ``DynModel`` (:mod:`.structs`) is a
namedtuple of writable, contiguous float64/int64 arrays (numba compiles one specialisation for
every mechanism), packed by entity with named column/row indices (:mod:`.layout`). Body index
-1 is the base. With ``n_b`` bodies the generalized velocity has ``n = nd * n_b`` entries,
``nd`` = 3 planar ``(v_x, v_y, w_z)`` / 6 spatial ``(v, w)``; world frame, CG velocities.

====================  ===============  ========================================================
field                 shape            content (SI)
====================  ===============  ========================================================
planar                int              1 planar, 0 spatial
body_mass             (n_b,)           kg
body_inertia          (n_b, 3, 3)      kg m^2 about the CG, link axes (planar: Izz only)
coordinate_scale      (n,)             1 (translations) or 1/length (rotations) per generalized
                                       coordinate
gravity               (3,)             m/s^2
joint_index           (n_j, 5)         J_TYPE, J_PARENT_BODY, J_CHILD_BODY (bodies),
                                       J_Q_START, J_Q_COUNT (variables)
joint_vectors         (n_j, 6, 3)      J_PARENT_ORIGIN, J_CHILD_ORIGIN joint-frame origins
                                       relative to the CG in body axes (world for the base);
                                       J_PARENT_AXIS, J_PARENT_NORMAL1, J_PARENT_NORMAL2 the
                                       joint axis and two perpendiculars (right-handed) in
                                       parent body axes; J_CHILD_NORMAL1 the first
                                       perpendicular in child body axes
joint_rotations       (n_j, 2, 3, 3)   joint-frame rotations in parent / child body axes
q_axis                (n_q, 3)         variable axes (joint frame)
q_is_rotation         (n_q,)           1 rotation, 0 translation
row_index             (n_r, 3)         constraint rows, see :mod:`.constraints`
row_vectors           (n_r, 2, 3)      constraint rows' vectors (u, w)
axial_bodies          (n_a, 2)         axial elements: bodies (a, b)
axial_points          (n_a, 2, 3)      axial elements: points relative to the CG (body axes)
axial_parameters      (n_a, 3)         K_STIFFNESS N/m, K_FREE_POSITION m, K_DAMPING N s/m
torsional_index       (n_t, 2)         torsional elements: (joint, variable)
torsional_parameters  (n_t, 3)         K_STIFFNESS N m/rad, K_FREE_POSITION rad,
                                       K_DAMPING N m s/rad
load_body             (n_l,)           constant loads: body
load_vectors          (n_l, 3, 3)      L_POINT rel. CG body axes, L_FORCE N, L_TORQUE N m
                                       world
torque_driver_index   (n_d, 4)         torque drivers: D_JOINT, D_VARIABLE, D_DRIVER (profile
                                       column), D_IS_ROTATION
damper_index          (n_e, 2)         dampers: E_KIND (AXIAL/TORSIONAL), E_ELEMENT
damper_coefficient    (n_e,)           dampers: damping (N s/m or N m s/rad)
mechanism_size        float            m, size of the mechanism (loop_closure.mechanism_size)
force_scale           float            N, force typical of the loads (weights, springs, loads)
====================  ===============  ========================================================
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
    fields = dict(planar=int(planar), body_mass=mass, body_inertia=inertia,
                  coordinate_scale=_c_scale(planar, len(mass), mechanism_size(mech)),
                  gravity=mech.gravity, q_axis=mech.q_axis, q_is_rotation=mech.q_is_rotation)
    fields.update(_joints(mech, link_body))
    rows = row_table(mech, joint_axes(mech))
    fields.update(row_index=np.column_stack([rows["kind"], rows["joint"], rows["driver"]]).reshape(-1, 3),
                  row_vectors=np.stack([rows["u"], rows["w"]], axis=1).reshape(-1, 2, 3))
    fields.update(_elements(mech, link_body))
    size = mechanism_size(mech)
    fields.update(mechanism_size=float(size), force_scale=_force_scale(mech, mass, size))
    scalars = ("planar", "mechanism_size", "force_scale")
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
    joint_vectors = np.stack([mech.T_parent_joint[:, :3, 3] - cg[mech.joint_parent],
                              mech.T_child_joint[:, :3, 3] - cg[mech.joint_child],
                              body_axes(Ra, axis), body_axes(Ra, n1), body_axes(Ra, n2), body_axes(Rb, n1)], axis=1)
    joint_index = np.column_stack([mech.joint_type, link_body[mech.joint_parent], link_body[mech.joint_child],
                                   mech.joint_q_start, mech.joint_q_count])
    return dict(joint_index=joint_index.reshape(-1, 5), joint_vectors=joint_vectors.reshape(-1, 6, 3),
                joint_rotations=np.stack([Ra, Rb], axis=1).reshape(-1, 2, 3, 3))


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
        axial_bodies=np.column_stack([link_body[la], link_body[lb]]).reshape(-1, 2),
        axial_points=np.stack([mech.T_link_frame[fa, :3, 3] - cg[la], mech.T_link_frame[fb, :3, 3] - cg[lb]],
                              axis=1).reshape(n_ax, 2, 3),
        axial_parameters=np.column_stack([mech.axial_stiffness, mech.axial_free_length,
                                          mech.axial_damping]).reshape(-1, 3),
        torsional_index=np.column_stack([mech.torsional_joint,
                                         mech.joint_q_start[mech.torsional_joint]]).reshape(-1, 2),
        torsional_parameters=np.column_stack([mech.torsional_stiffness, mech.torsional_free_angle,
                                              mech.torsional_damping]).reshape(-1, 3),
        load_body=link_body[ll],
        load_vectors=np.stack([mech.load_point[loads] - cg[ll], mech.load_force[loads], mech.load_torque[loads]],
                              axis=1).reshape(len(loads), 3, 3),
        torque_driver_index=np.column_stack([mech.q_joint[tq], tq, tdrv, mech.q_is_rotation[tq]]).reshape(-1, 4),
        damper_index=np.column_stack([np.r_[np.full(len(dp_ax), AXIAL), np.full(len(dp_to), TORSIONAL)],
                                      np.r_[dp_ax, dp_to]]).reshape(-1, 2),
        damper_coefficient=np.r_[mech.axial_damping[dp_ax], mech.torsional_damping[dp_to]],
    )


def _kernel_array(value) -> np.ndarray:
    a = np.asarray(value)
    dtype = np.int64 if a.dtype.kind in "biu" else np.float64
    return np.array(a, dtype=dtype, order="C", copy=True)
