"""Record types of the kernels: the model arrays and the integrator's work arrays.

Python code builds and reads namedtuples (:class:`DynModel`, :class:`Work`). Kernels get
:func:`as_kernel` of them: with numba a StructRef holding the same arrays (no copy), passed to a
compiled function as one pointer where a namedtuple of ~25 arrays is copied on every call
(measured: the four-bar benchmark runs 2.4x faster); without numba the namedtuple itself.
Kernels read fields by attribute either way (``m.b_mass``, ``w.pos``).

The StructRef constructors are written out (not numba's generated ``define_proxy``
constructor) so that they are cached like every other kernel (~0.7 s saved per process).
"""

from __future__ import annotations

from collections import namedtuple

from ..jit import jit_enabled

# field -> (dtype, ndim); dtype "i" int64, "f" float64; ndim 0 is a scalar
_MODEL_SPEC = dict(planar=("i", 0), b_mass=("f", 1), b_inertia=("f", 3), c_scale=("f", 1), gravity=("f", 1),
                   ji=("i", 2), jv=("f", 3), jm=("f", 4), q_axis=("f", 2), q_rot=("i", 1), ri=("i", 2),
                   rv=("f", 3), ai=("i", 2), av=("f", 3), ap=("f", 2), ti=("i", 2), tp=("f", 2), li=("i", 1),
                   lv=("f", 3), di=("i", 2), ei=("i", 2), ec=("f", 1),
                   length=("f", 0), f_scale=("f", 0))
_WORK_SPEC = dict(rows=("i", 1), pos=("f", 2), rot=("f", 3), ang=("f", 1), vel=("f", 2), omg=("f", 2),
                  q=("f", 1), JW=("f", 3), Qf=("f", 1), G=("f", 2), s=("f", 1), D=("f", 2), pos1=("f", 2),
                  rot1=("f", 3), ang1=("f", 1), q1=("f", 1), JW1=("f", 3), Qf1=("f", 1), G1=("f", 2),
                  g1=("f", 1), s1=("f", 1), D1=("f", 2), P=("f", 1), r=("f", 1), nu=("f", 1), nu2=("f", 1),
                  B=("f", 2), piv=("i", 1), rhs=("f", 1), xb=("f", 1), S=("f", 3), y=("f", 1),
                  acc=("f", 1), order=("i", 1), kkt_pos=("i", 1), band=("i", 1))
# block elimination of the step solves (integrator._assemble_reduced): mask of the eliminated
# components, inverses of their mass blocks, A^-1 G^T of the active rows on them, A^-1 a, and
# the active rows touching each body (CSR: start per body, row list)
_WORK_SPEC.update(eliminated=("i", 1), inverse_blocks=("f", 3), eliminated_rows=("f", 2), eliminated_rhs=("f", 1),
                  body_row_start=("i", 1), body_row_list=("i", 1))

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
        s.planar, s.b_mass, s.b_inertia, s.c_scale, s.gravity = t.planar, t.b_mass, t.b_inertia, t.c_scale, t.gravity
        s.ji, s.jv, s.jm, s.q_axis, s.q_rot = t.ji, t.jv, t.jm, t.q_axis, t.q_rot
        s.ri, s.rv, s.ai, s.av, s.ap, s.ti, s.tp = t.ri, t.rv, t.ai, t.av, t.ap, t.ti, t.tp
        s.li, s.lv, s.di, s.ei, s.ec = t.li, t.lv, t.di, t.ei, t.ec
        s.length, s.f_scale = t.length, t.f_scale
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
        s.eliminated, s.inverse_blocks, s.eliminated_rows = t.eliminated, t.inverse_blocks, t.eliminated_rows
        s.eliminated_rhs, s.body_row_start, s.body_row_list = t.eliminated_rhs, t.body_row_start, t.body_row_list
        return s

    _CONVERTERS = {DynModel: _model_struct, Work: _work_struct}


def as_kernel(record):
    """The record to pass to kernels: a StructRef sharing the arrays of the namedtuple
    ``record`` when numba is used, else ``record`` itself."""
    convert = _CONVERTERS.get(type(record))
    return record if convert is None else convert(record)
