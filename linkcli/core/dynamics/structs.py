"""Record types of the kernels: the model arrays and the integrator's work arrays.

Python code builds and reads namedtuples (:class:`DynModel`, :class:`Work`). Kernels get
:func:`as_kernel` of them: with numba a StructRef holding the same arrays (no copy), passed to a
compiled function as one pointer where a namedtuple of ~25 arrays is copied on every call
(measured: the four-bar benchmark runs 2.4x faster); without numba the namedtuple itself.
Kernels read fields by attribute either way (``m.body_mass``, ``w.pos``). The StructRef types are
registered by :mod:`.structref_access`, whose field reads need no reference counting, so the step
kernels are compiled without it (``maybe_njit(refcount=False)``: W3 3.9 -> 3.1 us per step).

Both records are declared once, in :mod:`.records` (name, dtype, shape, unit, meaning of every
field); the namedtuples below, their documentation and the numba StructRef types and
constructors (:mod:`.structs_generated`, generated from the same tables) all derive from it.
"""

from __future__ import annotations

from collections import namedtuple

from ..jit import jit_enabled
from .records import MODEL_FIELDS, WORK_FIELDS, field_doc, record_doc


def _record(name: str, fields: tuple, summary: str):
    cls = namedtuple(name, [f.name for f in fields])
    cls.__doc__ = f"{summary} Fields (declared in :mod:`.records`):\n\n{record_doc(fields)}\n"
    for f in fields:
        getattr(cls, f.name).__doc__ = field_doc(f)
    return cls


DynModel = _record("DynModel", MODEL_FIELDS,
                   "The dynamics view of a compiled mechanism (built by :func:`.model.build_model`).")
Work = _record("Work", WORK_FIELDS,
               "State and scratch arrays of the integrator (built by :func:`.integrator.make_work`).")

_CONVERTERS: dict = {}

if jit_enabled():
    from . import structs_generated

    _CONVERTERS = {DynModel: structs_generated.model_struct, Work: structs_generated.work_struct}


def as_kernel(record):
    """The record to pass to kernels: a StructRef sharing the arrays of the namedtuple
    ``record`` when numba is used, else ``record`` itself."""
    convert = _CONVERTERS.get(type(record))
    return record if convert is None else convert(record)
