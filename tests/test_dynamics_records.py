"""The kernel records are declared once (linkcli/core/dynamics/records.py): the generated numba
module is fresh, the compiled constructors set every declared field (a field left out would be
uninitialised only in compiled runs: zeros and empty arrays), the models built from real
mechanisms have the declared dtypes and shapes, and the layout constants index the declared
columns."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from test_dynamics_support import DATA, load

from linkcli.core.dynamics import layout, records
from linkcli.core.dynamics.bodies import inertial_properties, state_from_joints
from linkcli.core.dynamics.integrator import make_work
from linkcli.core.dynamics.model import build_model
from linkcli.core.dynamics.structs import DynModel, Work, as_kernel
from linkcli.core.jit import jit_enabled

GENERATED = Path(records.__file__).with_name("structs_generated.py")
MECHANISMS = Path(__file__).parent.parent / "mechanisms"
needs_numba = pytest.mark.skipif(not jit_enabled(), reason="the compiled constructors need numba")


def test_generated_module_is_fresh():
    assert GENERATED.read_text(encoding="utf-8") == records.generated_source(), (
        "linkcli/core/dynamics/structs_generated.py is stale: run `python -m linkcli.core.dynamics.records`")


def test_namedtuples_have_the_declared_fields_in_order():
    assert DynModel._fields == tuple(f.name for f in records.MODEL_FIELDS)
    assert Work._fields == tuple(f.name for f in records.WORK_FIELDS)
    for cls, fields in ((DynModel, records.MODEL_FIELDS), (Work, records.WORK_FIELDS)):
        for f in fields:
            assert f.unit and f.description and f.dtype in ("int", "float")
            assert f"[{f.unit}]" in getattr(cls, f.name).__doc__ and f.name in cls.__doc__


def test_layout_constants_index_the_declared_columns():
    seen = 0
    for f in records.MODEL_FIELDS + records.WORK_FIELDS:
        if f.columns:
            assert f.shape[1] == len(f.columns), f.name
            assert [getattr(layout, c) for c in f.columns] == list(range(len(f.columns))), f.name
            seen += 1
    assert seen == 10


def _synthetic(fields, cls):
    """A record whose every field holds distinct values (no zero, no empty array): whatever an
    unset struct member reads back as differs from it."""
    values, start = {}, 1
    for f in fields:
        offset = 0 if f.dtype == "int" else 0.25
        if f.ndim == 0:
            values[f.name] = start + offset
        else:
            dtype = np.int64 if f.dtype == "int" else np.float64
            values[f.name] = (np.arange(start, start + 2 ** f.ndim) + offset).astype(dtype).reshape((2,) * f.ndim)
        start += 2 ** f.ndim
    return cls(**values)


def _reader(fields):
    """A compiled function returning every declared field of a struct, in declaration order."""
    import numba

    ns: dict = {}
    exec("def read(s):\n    return (" + ", ".join(f"s.{f.name}" for f in fields) + ",)\n", ns)
    return numba.njit(ns["read"])


def _wrong_fields(fields, record, struct) -> list[str]:
    """Fields of the compiled ``struct`` that do not hold the namedtuple ``record``'s value (for
    arrays: the same memory, no copy)."""
    wrong = []
    for f, got in zip(fields, _reader(fields)(struct), strict=True):
        want = getattr(record, f.name)
        if f.ndim == 0:
            ok = got == want and type(got) is type(want)
        else:
            ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want) \
                and np.shares_memory(got, want)
        if not ok:
            wrong.append(f.name)
    return wrong


@needs_numba
def test_a_kernel_without_reference_counting_reads_every_record_field():
    """Field reads of structref_access.register work in a kernel compiled with refcount=False
    (numba's own registration cannot read a field there: "NRT required") and give the arrays
    the namedtuple holds, unchanged after the call (no reference was taken or dropped)."""
    import numba

    record = _synthetic(records.WORK_FIELDS, Work)
    struct = as_kernel(record)

    @numba.njit(_nrt=False)
    def first_entries(w):
        return (w.pos[0, 0], w.rot[0, 1, 1], w.rows[0], w.body_row_list.shape[0], w.band[1])

    got = first_entries(struct)
    assert got == (record.pos[0, 0], record.rot[0, 1, 1], record.rows[0], record.body_row_list.shape[0],
                   record.band[1])
    assert _wrong_fields(records.WORK_FIELDS, record, struct) == []


@needs_numba
def test_the_step_kernels_are_compiled_without_reference_counting():
    from linkcli.core.dynamics import constraints, integrator, kinematics, linalg

    for kernel in (integrator.run_steps, integrator.advance, integrator.position_step, kinematics.joint_geometry,
                   constraints.constraint_rows, linalg.band_lu_factor):
        assert kernel.targetoptions.get("_nrt") is False, kernel.__name__


@needs_numba
@pytest.mark.parametrize("cls, fields", [(DynModel, records.MODEL_FIELDS), (Work, records.WORK_FIELDS)])
def test_the_compiled_constructor_sets_every_declared_field(cls, fields):
    record = _synthetic(fields, cls)
    struct = as_kernel(record)
    assert type(struct) is not cls  # the compiled path, not the namedtuple itself
    assert _wrong_fields(fields, record, struct) == []


@needs_numba
def test_the_field_check_catches_a_field_the_constructor_leaves_out(tmp_path):
    """The check above is not vacuous: a constructor generated without one field's assignment
    (the bug the one declaration prevents) is caught, that field only."""
    source = records.generated_source()
    line = "    s.force_scale = t.force_scale\n"
    assert source.count(line) == 1
    path = tmp_path / "broken_structs.py"
    path.write_text(source.replace(line, ""), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("broken_structs", path)
    broken = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(broken)
    record = _synthetic(records.MODEL_FIELDS, DynModel)
    assert _wrong_fields(records.MODEL_FIELDS, record, broken.model_struct(record)) == ["force_scale"]


def _real_records(mech):
    mass, inertia = inertial_properties(mech)
    m = build_model(mech, mass, inertia)
    st = state_from_joints(mech, mech.q_init, np.zeros(mech.n_q))
    w = make_work(m, np.arange(m.row_index.shape[0]), st.pos, st.rot, st.angle, st.vel, st.omega, mech.q_init)
    return m, w


@pytest.mark.parametrize("path", sorted(DATA.glob("*.yaml")) + [MECHANISMS / "shaker_pendulum.yaml"],
                         ids=lambda p: p.name)
def test_models_of_real_mechanisms_have_the_declared_dtypes_and_shapes(path):
    """dtype and rank as declared, numeric dimensions as declared, every symbolic dimension one
    size throughout both records, and ``n = nd n_b``, ``N = n + n_r``."""
    mech = load(path.name) if path.parent == DATA else _compile(path)
    m, w = _real_records(mech)
    size: dict = {}
    for fields, record in ((records.MODEL_FIELDS, m), (records.WORK_FIELDS, w)):
        for f in fields:
            value = getattr(record, f.name)
            if f.ndim == 0:
                assert isinstance(value, int if f.dtype == "int" else float), f.name
                continue
            assert value.dtype == (np.int64 if f.dtype == "int" else np.float64), f.name
            assert value.ndim == f.ndim and value.flags.c_contiguous, f.name
            for dim, n in zip(f.shape, value.shape, strict=True):
                if isinstance(dim, int):
                    assert n == dim, f.name
                elif dim.isidentifier():
                    assert size.setdefault(dim, n) == n, (f.name, dim)
    assert size["n"] == (3 if mech.planar else 6) * size["n_b"]
    assert size["N"] == size["n"] + size["n_r"]
    assert size["n_q"] == mech.n_q and size["n_j"] == mech.n_joints


def _compile(path):
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import load_mechanism

    return compile_mechanism(load_mechanism(path).model)


def test_build_model_converts_to_the_declared_dtype_and_rank():
    """An integer-valued float field (a gravity of [0, -9, 0] given as integers) stays float64:
    the dtype comes from the declaration, not from the data; a wrong rank is refused."""
    from linkcli.core.dynamics.model import _as_declared

    gravity = next(f for f in records.MODEL_FIELDS if f.name == "gravity")
    g = _as_declared(np.array([0, -9, 0]), gravity)
    assert g.dtype == np.float64 and g.tolist() == [0.0, -9.0, 0.0]
    size = next(f for f in records.MODEL_FIELDS if f.name == "mechanism_size")
    assert type(_as_declared(np.int64(2), size)) is float
    with pytest.raises(AssertionError, match="gravity is 2-d, declared 1-d"):
        _as_declared(np.zeros((1, 3)), gravity)


_FALLBACK_SCRIPT = r"""
import numpy as np
from numba import types
from numba.experimental import structref
from linkcli.core import jit

assert jit.borrowed_struct_reads()  # numba as installed has them
jit.borrowed_struct_reads = lambda: False  # as a numba release that moved them
from linkcli.core.dynamics import structref_access

@structref_access.register
class PairType(types.StructRef):
    pass

class Pair(structref.StructRefProxy):
    pass

structref.define_proxy(Pair, PairType, ["a", "b"])

@jit.maybe_njit(refcount=False)
def total(p):
    return p.a.sum() + p.b

print(total(Pair(np.arange(4.0), 0.5)))
"""


def test_records_fall_back_to_numbas_registration_without_its_internals(tmp_path):
    """A numba release without the internals structref_access reads through: records are
    registered by numba's own structref.register and refcount=False kernels keep reference
    counting, so field reads still work (here: 0 + 1 + 2 + 3 + 0.5)."""
    pytest.importorskip("numba")
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), LINKCLI_JIT="always")
    script = tmp_path / "fallback.py"  # a file: numba caches only functions defined in one
    script.write_text(_FALLBACK_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "6.5"
