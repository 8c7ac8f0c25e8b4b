"""The dynamics view of a compiled mechanism: a few packed arrays read by the kernels.

Built once per simulation by :func:`build_model`. A ``DynModel`` (:mod:`.structs`) is a
namedtuple of writable, contiguous float64/int64 arrays (numba compiles one specialisation for
every mechanism), packed by entity with named column/row indices (:mod:`.layout`). Every field
(dtype, shape, unit, frame, meaning) is declared once in :mod:`.records` (``MODEL_FIELDS``);
``help(DynModel)`` lists them.
"""

from __future__ import annotations

import numpy as np

from ..loop_closure import mechanism_size
from ..mechanism import DRIVE_TORQUE, CompiledMechanism
from .bodies import body_links
from .constraints import perpendiculars, row_table
from .layout import AXIAL, TORSIONAL
from .records import MODEL_FIELDS, Field
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
    declared = {f.name: f for f in MODEL_FIELDS}
    if set(fields) != set(declared):
        raise AssertionError(f"build_model: fields {sorted(set(fields) ^ set(declared))} built but not declared "
                             "in records.MODEL_FIELDS, or declared but not built")
    return DynModel(**{name: _as_declared(value, declared[name]) for name, value in fields.items()})


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


def _as_declared(value, field: Field):
    """``value`` with the declared dtype (int64 or float64: an integer-valued float field such
    as a gravity of ``[0, -9]`` stays float): a Python scalar for a scalar field, else a
    writable, C-contiguous copy of the declared rank."""
    if field.ndim == 0:
        return int(value) if field.dtype == "int" else float(value)
    a = np.array(value, dtype=np.int64 if field.dtype == "int" else np.float64, order="C", copy=True)
    if a.ndim != field.ndim:
        raise AssertionError(f"build_model: {field.name} is {a.ndim}-d, declared {field.ndim}-d")
    return a
