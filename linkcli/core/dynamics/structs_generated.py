"""GENERATED from the declarations in records.py by records.generated_source(); do not edit.

Regenerate with ``python -m linkcli.core.dynamics.records`` (tests/test_dynamics_records.py
fails while this file is stale). numba StructRef types of the kernel records and their
constructors, in a real source file so that numba caches them (see records.py).
"""

import numba
from numba.core import types
from numba.experimental import structref

from linkcli.core.dynamics import structref_access


@structref_access.register
class ModelStruct(types.StructRef):
    pass


class ModelProxy(structref.StructRefProxy):
    pass


structref.define_boxing(ModelStruct, ModelProxy)
MODEL_TYPE = ModelStruct([
    ("planar", types.int64),
    ("body_mass", types.Array(types.float64, 1, "C")),
    ("body_inertia", types.Array(types.float64, 3, "C")),
    ("coordinate_scale", types.Array(types.float64, 1, "C")),
    ("gravity", types.Array(types.float64, 1, "C")),
    ("joint_index", types.Array(types.int64, 2, "C")),
    ("joint_vectors", types.Array(types.float64, 3, "C")),
    ("joint_rotations", types.Array(types.float64, 4, "C")),
    ("q_axis", types.Array(types.float64, 2, "C")),
    ("q_is_rotation", types.Array(types.int64, 1, "C")),
    ("row_index", types.Array(types.int64, 2, "C")),
    ("row_vectors", types.Array(types.float64, 3, "C")),
    ("axial_bodies", types.Array(types.int64, 2, "C")),
    ("axial_points", types.Array(types.float64, 3, "C")),
    ("axial_parameters", types.Array(types.float64, 2, "C")),
    ("torsional_index", types.Array(types.int64, 2, "C")),
    ("torsional_parameters", types.Array(types.float64, 2, "C")),
    ("load_body", types.Array(types.int64, 1, "C")),
    ("load_vectors", types.Array(types.float64, 3, "C")),
    ("torque_driver_index", types.Array(types.int64, 2, "C")),
    ("damper_index", types.Array(types.int64, 2, "C")),
    ("damper_coefficient", types.Array(types.float64, 1, "C")),
    ("mechanism_size", types.float64),
    ("force_scale", types.float64),
])


@numba.njit(cache=True)
def model_struct(t):
    """StructRef of the DynModel namedtuple ``t`` sharing its arrays (no copy)."""
    s = structref.new(MODEL_TYPE)
    s.planar = t.planar
    s.body_mass = t.body_mass
    s.body_inertia = t.body_inertia
    s.coordinate_scale = t.coordinate_scale
    s.gravity = t.gravity
    s.joint_index = t.joint_index
    s.joint_vectors = t.joint_vectors
    s.joint_rotations = t.joint_rotations
    s.q_axis = t.q_axis
    s.q_is_rotation = t.q_is_rotation
    s.row_index = t.row_index
    s.row_vectors = t.row_vectors
    s.axial_bodies = t.axial_bodies
    s.axial_points = t.axial_points
    s.axial_parameters = t.axial_parameters
    s.torsional_index = t.torsional_index
    s.torsional_parameters = t.torsional_parameters
    s.load_body = t.load_body
    s.load_vectors = t.load_vectors
    s.torque_driver_index = t.torque_driver_index
    s.damper_index = t.damper_index
    s.damper_coefficient = t.damper_coefficient
    s.mechanism_size = t.mechanism_size
    s.force_scale = t.force_scale
    return s


@structref_access.register
class WorkStruct(types.StructRef):
    pass


class WorkProxy(structref.StructRefProxy):
    pass


structref.define_boxing(WorkStruct, WorkProxy)
WORK_TYPE = WorkStruct([
    ("rows", types.Array(types.int64, 1, "C")),
    ("pos", types.Array(types.float64, 2, "C")),
    ("rot", types.Array(types.float64, 3, "C")),
    ("ang", types.Array(types.float64, 1, "C")),
    ("vel", types.Array(types.float64, 2, "C")),
    ("omg", types.Array(types.float64, 2, "C")),
    ("q", types.Array(types.float64, 1, "C")),
    ("JW", types.Array(types.float64, 3, "C")),
    ("Qf", types.Array(types.float64, 1, "C")),
    ("G", types.Array(types.float64, 2, "C")),
    ("s", types.Array(types.float64, 1, "C")),
    ("D", types.Array(types.float64, 2, "C")),
    ("pos1", types.Array(types.float64, 2, "C")),
    ("rot1", types.Array(types.float64, 3, "C")),
    ("ang1", types.Array(types.float64, 1, "C")),
    ("q1", types.Array(types.float64, 1, "C")),
    ("JW1", types.Array(types.float64, 3, "C")),
    ("Qf1", types.Array(types.float64, 1, "C")),
    ("G1", types.Array(types.float64, 2, "C")),
    ("g1", types.Array(types.float64, 1, "C")),
    ("s1", types.Array(types.float64, 1, "C")),
    ("D1", types.Array(types.float64, 2, "C")),
    ("P", types.Array(types.float64, 1, "C")),
    ("r", types.Array(types.float64, 1, "C")),
    ("nu", types.Array(types.float64, 1, "C")),
    ("nu2", types.Array(types.float64, 1, "C")),
    ("B", types.Array(types.float64, 2, "C")),
    ("piv", types.Array(types.int64, 1, "C")),
    ("rhs", types.Array(types.float64, 1, "C")),
    ("xb", types.Array(types.float64, 1, "C")),
    ("S", types.Array(types.float64, 3, "C")),
    ("acc", types.Array(types.float64, 1, "C")),
    ("order", types.Array(types.int64, 1, "C")),
    ("kkt_pos", types.Array(types.int64, 1, "C")),
    ("band", types.Array(types.int64, 1, "C")),
    ("eliminated", types.Array(types.int64, 1, "C")),
    ("inverse_blocks", types.Array(types.float64, 3, "C")),
    ("eliminated_rows", types.Array(types.float64, 2, "C")),
    ("eliminated_rhs", types.Array(types.float64, 1, "C")),
    ("body_row_start", types.Array(types.int64, 1, "C")),
    ("body_row_list", types.Array(types.int64, 1, "C")),
])


@numba.njit(cache=True)
def work_struct(t):
    """StructRef of the Work namedtuple ``t`` sharing its arrays (no copy)."""
    s = structref.new(WORK_TYPE)
    s.rows = t.rows
    s.pos = t.pos
    s.rot = t.rot
    s.ang = t.ang
    s.vel = t.vel
    s.omg = t.omg
    s.q = t.q
    s.JW = t.JW
    s.Qf = t.Qf
    s.G = t.G
    s.s = t.s
    s.D = t.D
    s.pos1 = t.pos1
    s.rot1 = t.rot1
    s.ang1 = t.ang1
    s.q1 = t.q1
    s.JW1 = t.JW1
    s.Qf1 = t.Qf1
    s.G1 = t.G1
    s.g1 = t.g1
    s.s1 = t.s1
    s.D1 = t.D1
    s.P = t.P
    s.r = t.r
    s.nu = t.nu
    s.nu2 = t.nu2
    s.B = t.B
    s.piv = t.piv
    s.rhs = t.rhs
    s.xb = t.xb
    s.S = t.S
    s.acc = t.acc
    s.order = t.order
    s.kkt_pos = t.kkt_pos
    s.band = t.band
    s.eliminated = t.eliminated
    s.inverse_blocks = t.inverse_blocks
    s.eliminated_rows = t.eliminated_rows
    s.eliminated_rhs = t.eliminated_rhs
    s.body_row_start = t.body_row_start
    s.body_row_list = t.body_row_list
    return s
