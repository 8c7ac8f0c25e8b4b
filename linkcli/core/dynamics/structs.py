"""Record types of the kernels: the model arrays and the integrator's work arrays.

Python code builds and reads namedtuples (:class:`DynModel`, :class:`Work`). Kernels get
:func:`as_kernel` of them: with numba a StructRef holding the same arrays (no copy), passed to a
compiled function as one pointer, where a namedtuple of ~25 arrays would be copied on every call
(measured ~0.25 us per call, more than the work of most helpers); without numba the namedtuple
itself. Kernels read fields by attribute either way (``m.b_mass``, ``w.pos``).
"""

from __future__ import annotations

from collections import namedtuple

from ..jit import jit_enabled

DynModel = namedtuple("DynModel", ("planar", "b_mass", "b_inertia", "m_scale", "gravity", "ji", "jv", "jm",
                                   "q_axis", "q_rot", "ri", "rv", "ai", "av", "ap", "ti", "tp", "li", "lv",
                                   "di", "ei", "ec"))
Work = namedtuple("Work", ("rows", "pos", "rot", "ang", "vel", "omg", "q", "JW", "Qf", "G", "s", "D",
                           "pos1", "rot1", "ang1", "q1", "JW1", "Qf1", "G1", "g1", "s1", "D1",
                           "P", "r", "nu", "nu2", "K", "piv", "rhs", "S"))

_PROXIES: dict = {}

if jit_enabled():
    from numba.core import types
    from numba.experimental import structref

    class _Fields(types.StructRef):
        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(typ)) for name, typ in fields)

    @structref.register
    class ModelStruct(_Fields):
        pass

    @structref.register
    class WorkStruct(_Fields):
        pass

    class ModelProxy(structref.StructRefProxy):
        pass

    class WorkProxy(structref.StructRefProxy):
        pass

    structref.define_proxy(ModelProxy, ModelStruct, list(DynModel._fields))
    structref.define_proxy(WorkProxy, WorkStruct, list(Work._fields))
    _PROXIES = {DynModel: ModelProxy, Work: WorkProxy}


def as_kernel(record):
    """The record to pass to kernels: a StructRef sharing the arrays of the namedtuple
    ``record`` when numba is used, else ``record`` itself."""
    proxy = _PROXIES.get(type(record))
    return record if proxy is None else proxy(*record)
