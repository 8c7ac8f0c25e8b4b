"""numba registration of the kernel records (:mod:`.structs_generated`) whose field reads work
without numba's reference counting, so that the step kernels can be compiled with
``maybe_njit(refcount=False)``.

numba's own ``structref.register`` reads a field through ``context.nrt.meminfo_data``, which
exists only where reference counting is on, and returns it with an atomic increment (and a
decrement when the caller is done). The step of the W3 four-bar reads ~100 fields and passes
~100 arrays on per step; with those atomic updates it took 3.9 us, without them 3.1 us (CPU,
best of 7, benchmarks/README.md). :func:`register` is numba's registration with the field read
written out: the payload pointer loaded from the MemInfo as numba's ``NRT_MemInfo_data_fast``
does (same struct type, ``nrtdynmod._meminfo_struct_type``), the field returned as a borrowed
reference (``impl_ret_borrowed`` increments only where reference counting is on). Records stay
owned by the Python namedtuples that hold their arrays (:func:`.structs.as_kernel`), so a kernel
never needs to own them. Field writes (the constructors in :mod:`.structs_generated`) keep
numba's implementation, which needs reference counting.

Imported only where numba is used (by :mod:`.structs_generated`). When a numba release moves the
internals used here (:func:`linkcli.core.jit.borrowed_struct_reads`), :func:`register` is
numba's own ``structref.register`` and the kernels keep reference counting.
"""

from __future__ import annotations

from numba.core import cgutils, imputils
from numba.core.datamodel import default_manager, models
from numba.core.extending import infer_getattr, lower_getattr_generic, lower_setattr_generic
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref

from ..jit import borrowed_struct_reads


def register(struct_typeclass):
    """Register ``struct_typeclass`` (a ``types.StructRef`` subclass) as numba's
    ``structref.register`` does, with field reads that need no reference counting (numba's
    own registration when :func:`~linkcli.core.jit.borrowed_struct_reads` is False)."""
    if not borrowed_struct_reads():
        return structref.register(struct_typeclass)
    from numba.core.runtime.nrtdynmod import _meminfo_struct_type
    from numba.experimental.structref import _Utils

    default_manager.register(struct_typeclass, models.StructRefModel)

    @infer_getattr
    class _Attributes(AttributeTemplate):
        key = struct_typeclass

        def generic_resolve(self, typ, attr):
            return typ.field_dict.get(attr)

    @lower_getattr_generic(struct_typeclass)
    def _get(context, builder, typ, val, attr):
        meminfo = cgutils.create_struct_proxy(typ)(context, builder, value=val).meminfo
        header = builder.bitcast(meminfo, _meminfo_struct_type.as_pointer())
        data = builder.load(cgutils.gep(builder, header, 0, 3))  # MemInfo.data, as NRT_MemInfo_data_fast
        payload_type = typ.get_data_type()
        stored = context.data_model_manager[payload_type].get_value_type()
        payload = cgutils.create_struct_proxy(payload_type)(context, builder,
                                                            ref=builder.bitcast(data, stored.as_pointer()))
        return imputils.impl_ret_borrowed(context, builder, typ.field_dict[attr], getattr(payload, attr))

    @lower_setattr_generic(struct_typeclass)
    def _set(context, builder, sig, args, attr):  # numba's structref setattr (needs reference counting)
        inst_type, val_type = sig.args
        instance, val = args
        payload = _Utils(context, builder, inst_type).get_data_struct(instance)
        casted = context.cast(builder, val, val_type, inst_type.field_dict[attr])
        old = getattr(payload, attr)
        context.nrt.incref(builder, val_type, casted)
        context.nrt.decref(builder, val_type, old)  # last, in case the new value is the old one
        setattr(payload, attr, casted)

    return struct_typeclass
