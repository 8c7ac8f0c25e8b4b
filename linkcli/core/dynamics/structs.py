"""Record types of the kernels: the model arrays and the integrator's work arrays.

Python code builds and reads namedtuples (:class:`DynModel`, :class:`Work`). Kernels get
:func:`as_kernel` of them: with numba a StructRef holding the same arrays (no copy), passed to a
compiled function as one pointer where a namedtuple of ~25 arrays is copied on every call
(measured: the four-bar benchmark runs 2.4x faster); without numba the namedtuple itself.
Kernels read fields by attribute either way (``m.body_mass``, ``w.pos``).

The StructRef constructors are written out (not numba's generated ``define_proxy``
constructor) so that they are cached like every other kernel (~0.7 s saved per process).
"""

from __future__ import annotations

from collections import namedtuple

from ..jit import jit_enabled

# field -> (dtype, ndim); dtype "i" int64, "f" float64; ndim 0 is a scalar
_MODEL_SPEC = dict(planar=("i", 0), body_mass=("f", 1), body_inertia=("f", 3), coordinate_scale=("f", 1),
                   gravity=("f", 1), joint_index=("i", 2), joint_vectors=("f", 3), joint_rotations=("f", 4),
                   q_axis=("f", 2), q_is_rotation=("i", 1), row_index=("i", 2), row_vectors=("f", 3),
                   axial_bodies=("i", 2), axial_points=("f", 3), axial_parameters=("f", 2), torsional_index=("i", 2),
                   torsional_parameters=("f", 2), load_body=("i", 1), load_vectors=("f", 3),
                   torque_driver_index=("i", 2), damper_index=("i", 2), damper_coefficient=("f", 1),
                   mechanism_size=("f", 0), force_scale=("f", 0))
_WORK_SPEC = dict(rows=("i", 1), pos=("f", 2), rot=("f", 3), ang=("f", 1), vel=("f", 2), omg=("f", 2),
                  q=("f", 1), JW=("f", 3), Qf=("f", 1), G=("f", 2), s=("f", 1), D=("f", 2), pos1=("f", 2),
                  rot1=("f", 3), ang1=("f", 1), q1=("f", 1), JW1=("f", 3), Qf1=("f", 1), G1=("f", 2),
                  g1=("f", 1), s1=("f", 1), D1=("f", 2), P=("f", 1), r=("f", 1), nu=("f", 1), nu2=("f", 1),
                  B=("f", 2), piv=("i", 1), rhs=("f", 1), xb=("f", 1), S=("f", 3), y=("f", 1),
                  acc=("f", 1), order=("i", 1), kkt_pos=("i", 1), band=("i", 1))

DynModel = namedtuple("DynModel", tuple(_MODEL_SPEC))
Work = namedtuple("Work", tuple(_WORK_SPEC))

_CONVERTERS: dict = {}

if jit_enabled():
    import numba
    from numba.core import types
    from numba.experimental import structref

    def _numba_fields(spec):
        kinds = {"i": types.int64, "f": types.float64}
        return [(name, kinds[k] if nd == 0 else types.Array(kinds[k], nd, "C")) for name, (k, nd) in spec.items()]

    @structref.register
    class ModelStruct(types.StructRef):
        pass

    @structref.register
    class WorkStruct(types.StructRef):
        pass

    class ModelProxy(structref.StructRefProxy):
        pass

    class WorkProxy(structref.StructRefProxy):
        pass

    structref.define_boxing(ModelStruct, ModelProxy)
    structref.define_boxing(WorkStruct, WorkProxy)
    _MODEL_TYPE = ModelStruct(_numba_fields(_MODEL_SPEC))
    _WORK_TYPE = WorkStruct(_numba_fields(_WORK_SPEC))

    @numba.njit(cache=True)
    def _model_struct(t):
        s = structref.new(_MODEL_TYPE)
        s.planar, s.body_mass, s.body_inertia = t.planar, t.body_mass, t.body_inertia
        s.coordinate_scale, s.gravity = t.coordinate_scale, t.gravity
        s.joint_index, s.joint_vectors, s.joint_rotations = t.joint_index, t.joint_vectors, t.joint_rotations
        s.q_axis, s.q_is_rotation = t.q_axis, t.q_is_rotation
        s.row_index, s.row_vectors = t.row_index, t.row_vectors
        s.axial_bodies, s.axial_points, s.axial_parameters = t.axial_bodies, t.axial_points, t.axial_parameters
        s.torsional_index, s.torsional_parameters = t.torsional_index, t.torsional_parameters
        s.load_body, s.load_vectors, s.torque_driver_index = t.load_body, t.load_vectors, t.torque_driver_index
        s.damper_index, s.damper_coefficient = t.damper_index, t.damper_coefficient
        s.mechanism_size, s.force_scale = t.mechanism_size, t.force_scale
        return s

    @numba.njit(cache=True)
    def _work_struct(t):
        s = structref.new(_WORK_TYPE)
        s.rows, s.pos, s.rot, s.ang, s.vel, s.omg, s.q, s.JW = t.rows, t.pos, t.rot, t.ang, t.vel, t.omg, t.q, t.JW
        s.Qf, s.G, s.s, s.D = t.Qf, t.G, t.s, t.D
        s.pos1, s.rot1, s.ang1, s.q1, s.JW1, s.Qf1 = t.pos1, t.rot1, t.ang1, t.q1, t.JW1, t.Qf1
        s.G1, s.g1, s.s1, s.D1 = t.G1, t.g1, t.s1, t.D1
        s.P, s.r, s.nu, s.nu2, s.B, s.piv, s.rhs, s.S = t.P, t.r, t.nu, t.nu2, t.B, t.piv, t.rhs, t.S
        s.xb, s.y, s.acc, s.order, s.kkt_pos, s.band = t.xb, t.y, t.acc, t.order, t.kkt_pos, t.band
        return s

    _CONVERTERS = {DynModel: _model_struct, Work: _work_struct}


def as_kernel(record):
    """The record to pass to kernels: a StructRef sharing the arrays of the namedtuple
    ``record`` when numba is used, else ``record`` itself."""
    convert = _CONVERTERS.get(type(record))
    return record if convert is None else convert(record)
