"""The fast path of a study: variants of one mechanism evaluated together.

Today's way to evaluate a variant (:func:`linkcli.batch.worker.evaluate`) validates the
variant's document like a file, compiles it, runs the whole analysis and builds its full result
table: ~3-10 ms of generic work around a ~0.2 ms compiled sweep. A study's variants differ only
in the study's parameters, so for the studies this module covers, a worker

1. validates and compiles the nominal document once (per process and study: :func:`prepare`),
   with the solve request built exactly as the job's (:func:`linkcli.batch.analyses.solve_request`);
2. maps each parameter to the compiled arrays it sets -- a frame origin coordinate
   ``links.L.frames.F[i]`` (or ``...F.origin[i]``) is ``value x metres per file unit`` in the
   frame's pose on its link and in the joint frames of the joints attached at ``L.F`` -- and
   *proves the map* once: the document with test values, validated and compiled the ordinary
   way, must give exactly the patched arrays and leave every other kinematic array unchanged;
3. per chunk of variants: checks each variant's values as validation would (a finite real
   number is all a frame coordinate must be: the file checks' value-dependent findings there are
   warnings, which a study row does not carry), builds the frame arrays of all variants at once,
   and runs the compiled kernel variant after variant
   (:class:`linkcli.core.variant_sweep.VariantKernel`: ~0.1-0.2 ms each);
4. computes the figures and checks with the ordinary code of :mod:`~linkcli.batch.figures`
   on a *lazy table* that computes only the columns the figures and checks read, with the same
   conversions and names as the full table (checked on the nominal at preparation, column for
   column, against its full table).

Everything else takes today's path, variant by variant (also every study when the environment
variable ``LINKCLI_STUDY_PATH`` is ``per-variant``), and says so (``VariantRow.path``; the
study's metadata counts both and gives the reasons): a study the fast path does not cover
(another analysis, ``strict: true``, parameters that are not frame coordinates, no compiled
kernel, figures that read columns it does not compute), and any variant whose values
validation would reject (not a finite number: today's path reports it, at the file's line) or
whose sweep is not clean (a point that did not converge, a restart, a singular configuration:
today's path then builds the statuses, events and messages).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FAST, PER_VARIANT = "fast", "per-variant"

#: fields of a compiled mechanism the solve analysis does not read: the fast path leaves them
#: at the nominal's values (mass properties, springs, loads and drivers: dynamics only)
_NOT_KINEMATIC = {"link_mass", "link_has_mass", "link_cg", "link_inertia", "gravity", "axial_frame_a", "axial_frame_b",
                  "axial_stiffness", "axial_free_length", "axial_damping", "torsional_joint", "torsional_stiffness",
                  "torsional_free_angle", "torsional_damping", "load_link", "load_point", "load_force", "load_torque",
                  "driver_q", "driver_kind", "driver_profile"}
_PATCHED = ("T_link_frame", "T_parent_joint", "T_child_joint")


class NotCovered(Exception):
    """The fast path does not cover this study (the message says why)."""


class _NeedsFullTable(Exception):
    """A figure or check read a column the lazy table does not compute."""


@dataclass
class FastStudy:
    """What a worker prepares once per study (see the module docstring)."""

    spec: Any
    mech: Any  # nominal CompiledMechanism
    kernel: Any  # VariantKernel
    path: np.ndarray  # (n, n_act) SI, solve order
    order: np.ndarray  # output row order
    tol: float
    targets: list  # per parameter: [(array name, flat index)]
    frames: list  # output frame indices
    headers: list  # the full table's headers, in order
    columns: dict  # header -> (entity, quantity, unit, producer(ctx) -> values)
    reference: dict
    has_limits: bool
    figures: tuple = ()
    base: dict = field(default_factory=dict)  # array name -> nominal array
    inputs: np.ndarray | None = None  # (n, n_act) the path in file units as requested (the input columns)


#: environment variable: ``per-variant`` makes every study take the per-variant path (to compare
#: the two, or to rule the fast path out); anything else, or unset: the fast path where it applies
ENV = "LINKCLI_STUDY_PATH"


def _forced() -> str:
    return os.environ.get(ENV, "").strip().lower()


# -- preparation ----------------------------------------------------------------------------------------
_PREPARED: dict = {}
_CACHE_SIZE = 16


def prepare(task) -> FastStudy | str:
    """The FastStudy of a chunk's study (cached per process), or why the fast path does not
    cover it."""
    ref = tuple((k, np.asarray(v).tobytes()) for k, v in sorted(task.reference.items()))
    key = (task.source.path, task.source.sha256, repr(task.spec), task.paths, ref, _forced(),
           os.environ.get("LINKCLI_JIT", ""), os.environ.get("LINKCLI_NO_JIT", ""))
    hit = _PREPARED.get(key)
    if hit is None:
        try:
            hit = _prepare(task)
        except NotCovered as exc:
            hit = str(exc)
        if len(_PREPARED) >= _CACHE_SIZE:
            _PREPARED.clear()
        _PREPARED[key] = hit
    return hit


def _prepare(task) -> FastStudy:
    from ..analyses.inputs import input_grid
    from ..compile import compile_mechanism
    from ..core import sweep as sw
    from ..core.variant_sweep import VariantKernel
    from ..errors import LinkcliError
    from ..io.loader import validate_document
    from .analyses import solve_request
    from .figures import default_figures
    from .worker import document, evaluate

    spec = task.spec
    if _forced() == PER_VARIANT:
        raise NotCovered(f"{ENV}={PER_VARIANT}")
    if spec.analysis != "solve":
        raise NotCovered(f"analysis {spec.analysis}: the fast path covers solve studies")
    if spec.strict:
        raise NotCovered("strict: true (the file checks' warnings depend on each variant's values)")
    data, smap = document(task.source)
    try:
        loaded = validate_document(data, smap, task.source.path, task.source.sha256)
        mech = compile_mechanism(loaded.model, file=task.source.path)
        req = solve_request(loaded, spec.options, many=True)
        grid = input_grid(mech, req.set, req.sweeps, req.mode)  # as solve: SI path, file-unit inputs
        path, order = grid.path, grid.order
    except LinkcliError as exc:  # the per-variant path reports it
        raise NotCovered(f"the nominal does not run: {exc}") from None
    if req.rates or req.accelerations:
        raise NotCovered("rates or accelerations are requested (the fast path solves positions)")
    if not sw._use_compiled(mech, len(path), many=True):
        raise NotCovered("the compiled sweep kernel is not available (numba not installed, or LINKCLI_JIT=never)")
    try:
        kernel = VariantKernel(mech)
    except ValueError as exc:
        raise NotCovered(str(exc)) from None
    frames = _output_frames(mech, req.output_frames)
    targets = [_targets(data, loaded.model, mech, keys) for keys in task.paths]
    fs = FastStudy(spec, mech, kernel, np.ascontiguousarray(path, dtype=float), order, req.tol, targets, frames, [],
                   {}, dict(task.reference), bool(np.isfinite(mech.q_lower).any() or np.isfinite(mech.q_upper).any()),
                   base={name: getattr(mech, name) for name in _PATCHED}, inputs=grid.file)
    fs.figures = tuple(spec.figures) if spec.figures is not None else tuple(default_figures("solve", mech))
    _prove_map(fs, task, data, smap, compile_mechanism, validate_document)
    # the nominal evaluated the ordinary way: its full table's headers, and the reference for the lazy one
    full = evaluate(spec, task.source.path, data, smap, task.source.sha256, reference=task.reference)
    if full.table is None or full.status not in ("passed", "failed") or full.n_failed:
        raise NotCovered(f"the nominal does not solve cleanly ({full.status}: {full.message})")
    fs.headers = full.table.headers()
    fs.columns = _columns(fs, full.table)
    _check_nominal(fs, full, task)
    return fs


def _output_frames(mech, names) -> list[int]:
    named = [i for i, n in enumerate(mech.frame_names) if "." in n]
    if names is None:
        return named
    if any(n not in mech.frame_names for n in names):
        raise NotCovered("output_frames names a frame the mechanism does not have")
    return [mech.frame_names.index(n) for n in names]


def _targets(data, model, mech, keys: tuple) -> list:
    """[(array name, flat index)] of the compiled entries (m) set by the frame coordinate at
    ``keys`` (NotCovered when ``keys`` is not one)."""
    shown = ".".join(str(k) for k in keys)
    from .paths import PathProblem, get_value

    ok, link, frame, axis = False, None, None, None
    if len(keys) in (5, 6) and keys[0] == "links" and keys[2] == "frames":
        link, frame, axis = keys[1], keys[3], keys[-1]
        try:
            node = get_value(data, keys[:4])
        except PathProblem:
            node = None
        if len(keys) == 6:
            ok = keys[4] == "origin" and isinstance(node, dict) and isinstance(node.get("origin"), list)
        else:  # the list form; planar [x, y, angle]: position 2 is the angle
            ok = isinstance(node, list) and not (mech.planar and len(node) == 3 and axis == 2)
    if not (ok and isinstance(axis, int) and 0 <= axis < (2 if mech.planar else 3)):
        raise NotCovered(f"parameter {shown}: the fast path varies frame origin coordinates "
                         "(links.LINK.frames.FRAME[i]) only")
    name = f"{link}.{frame}"
    if name not in mech.frame_names:
        raise NotCovered(f"parameter {shown}: frame {name} is not part of the compiled mechanism")
    out = [("T_link_frame", np.ravel_multi_index((mech.frame_index(name), axis, 3), mech.T_link_frame.shape))]
    for jname, j in model.joints.items():
        ji = mech.joint_index(jname)
        if j.parent == name:
            out.append(("T_parent_joint", np.ravel_multi_index((ji, axis, 3), mech.T_parent_joint.shape)))
        if j.child == name:
            out.append(("T_child_joint", np.ravel_multi_index((ji, axis, 3), mech.T_child_joint.shape)))
    return out


def patched_arrays(fs: FastStudy, values: np.ndarray) -> dict:
    """{array name: (n_variants, ...) array} of variants with parameter values (n_variants,
    n_params) in the file's length unit."""
    out = {}
    for name, a in fs.base.items():
        out[name] = np.repeat(a[None], len(values), axis=0)
    for p, targets in enumerate(fs.targets):
        si = values[:, p] * fs.mech.length_scale
        for name, flat in targets:
            out[name].reshape(len(values), -1)[:, flat] = si
    return out


def _geometry(fs: FastStudy, values: np.ndarray):
    arrays = patched_arrays(fs, values)
    return fs.kernel.geometry(*(arrays[n] for n in _PATCHED))


def _prove_map(fs: FastStudy, task, data, smap, compile_mechanism, validate_document) -> None:
    """Validate and compile the document with test values the ordinary way; the patched arrays
    must equal its arrays exactly, every other kinematic array the nominal's, and the kernel
    model derived for all variants at once sweep.py's for this variant."""
    from dataclasses import fields

    from .paths import nominal_number, with_values

    numbers = [nominal_number(data, keys) for keys in task.paths]
    nominal = [v for v in numbers if v is not None]
    if len(nominal) != len(numbers):
        raise NotCovered("a parameter has no number in the file")
    size = max(1.0, *(abs(v) for v in nominal))
    test = [v + 1e-3 * (k + 1) * size for k, v in enumerate(nominal)]  # distinct small changes
    try:
        loaded = validate_document(with_values(data, task.paths, test), smap, task.source.path)
        other = compile_mechanism(loaded.model, file=task.source.path)
    except Exception as exc:  # noqa: BLE001 - then the map cannot be proved: not covered
        raise NotCovered(f"a test variant does not validate ({type(exc).__name__})") from None
    arrays = patched_arrays(fs, np.array([test], dtype=float))
    for name in fs.base:
        if not np.array_equal(arrays[name][0], getattr(other, name)):
            raise NotCovered(f"the parameters set {name} in ways other than frame coordinates")
    for f in fields(fs.mech):
        if not f.init or f.name in _PATCHED or f.name in _NOT_KINEMATIC:
            continue
        a, b = getattr(fs.mech, f.name), getattr(other, f.name)
        same = np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
        if not same:
            raise NotCovered(f"the parameters change {f.name} of the compiled mechanism")
    problem = fs.kernel.check(fs.kernel.geometry(*(arrays[n] for n in _PATCHED)))
    if problem:
        raise NotCovered(f"the batched kernel model differs from sweep.py's ({problem}: a bug, please report it)")


# -- the lazy table -------------------------------------------------------------------------------------
class _Chunk:
    """The clean variants of a chunk: their sweeps stacked, and what the figures need from them
    computed for all of them at once on first use."""

    def __init__(self, fs: FastStudy, g, clean: list, sweeps: list) -> None:
        from ..core.variant_sweep import VariantGeometry

        self.fs = fs
        take = np.asarray(clean, dtype=int)
        self.g = VariantGeometry(*(getattr(g, name)[take] for name in VariantGeometry.__dataclass_fields__))
        self.q = np.stack([s.q for s in sweeps]) if sweeps else np.zeros((0, len(fs.path), fs.mech.n_q))
        self.sweeps = sweeps
        self._poses: np.ndarray | None = None
        self._frames: np.ndarray | None = None
        self._lengths: np.ndarray | None = None
        self._trans: dict = {}
        self._gaps: dict = {}

    def gaps(self, c: int) -> np.ndarray:
        """(n, n_loops) m, solve order: variant c's loop residuals as solve tabulates them
        (:func:`linkcli.core.loop_closure.loop_gaps` of the variant's own frames)."""
        if c not in self._gaps:
            from ..core.loop_closure import loop_gaps
            from ..core.variant_sweep import variant_mechanism

            g = self.g
            vm = variant_mechanism(self.fs.mech, g.T_link_frame[c], g.T_parent_joint[c], g.T_child_joint[c])
            self._gaps[c] = loop_gaps(vm, self.q[c])
        return self._gaps[c]

    @property
    def poses(self):
        if self._poses is None:
            self._poses = self.fs.kernel.link_poses(self.g, self.q)
        return self._poses

    @property
    def frames(self):  # (C, n, n_output_frames, 2) m
        if self._frames is None:
            self._frames = self.fs.kernel.frame_positions(self.g, self.poses, self.fs.frames)
        return self._frames

    def transmission(self, i: int):  # (C, n) rad
        if i not in self._trans:
            self._trans[i] = self.fs.kernel.transmission_angles(self.g, self.poses, i)
        return self._trans[i]

    def points(self, c: int):
        """Variant c's KernelPoints (its own geometry: range_of_motion's refinement)."""
        return self.fs.kernel.points(self.g, c)

    def loops(self, c: int) -> list:
        """Variant c's four-bar loops (the nominal's rings with its own lengths)."""
        from ..core.planar_metrics import FourBarLoop

        if self._lengths is None:
            self._lengths = self.fs.kernel.fourbar_lengths(self.g)
        lengths = self._lengths
        return [FourBarLoop(lp.joints, lp.links, (float(lengths[c, i, 0]), float(lengths[c, i, 1]),
                                                  float(lengths[c, i, 2]), float(lengths[c, i, 3])))
                for i, lp in enumerate(self.fs.kernel.loops)]


def _columns(fs: FastStudy, full) -> dict:
    """header -> (entity, quantity, unit, producer(chunk, c) -> values in output order) of the
    columns the lazy table computes, named and converted as analyses/solve.py does."""
    from ..core.limits import row_status
    from ..results import ResultTable, Units

    mech, o = fs.mech, fs.order
    units = Units.of(mech)
    t = ResultTable(len(o), units=units)  # only to name the columns as the full table does
    cols: dict = {}

    def put(col, producer):
        cols[col.header] = (col.entity, col.quantity, col.unit, producer)

    actuated = list(mech.q_actuated)
    for k, col in enumerate(t.add_q(mech.q_names, np.zeros((len(o), mech.n_q)), mech.q_is_rotation)):
        def q_col(ch, c, k=k):  # failed rows do not reach the fast path; inputs as requested (file units)
            if k in actuated and fs.inputs is not None:
                return fs.inputs[o, actuated.index(k)]
            return units.q_from_si(ch.q[c, o, k][:, None], mech.q_is_rotation[k:k + 1])[:, 0]
        put(col, q_col)
    axes = "xy" if mech.planar else "xyz"
    for i, f in enumerate(fs.frames):
        for k, axis in enumerate(axes):
            col = t.add_length(mech.frame_names[f], axis, np.zeros(len(o)))
            put(col, lambda ch, c, i=i, k=k: units.length_from_si(ch.frames[c, o, i, k]))
    named: set = set()
    for li, loop in enumerate(fs.kernel.loops):
        entity = mech.joint_names[loop.joints[2]]
        if entity in named:
            entity = f"{mech.joint_names[loop.joints[1]]}-{entity}"
        named.add(entity)
        col = t.add_angle(entity, "transmission", np.zeros(len(o)))
        put(col, lambda ch, c, li=li: units.angle_from_si(ch.transmission(li)[c, o]))
    status = row_status(mech, fs.path, np.zeros(len(o), dtype=int))[o]
    put(t.add("", "status", "", status), lambda ch, c: status)
    for li, j in enumerate(mech.loop_joint):  # a length: each loop's misfit, angular ones times the size
        put(t.add_length(f"loop_{mech.joint_names[j]}", "residual", np.zeros(len(o))),
            lambda ch, c, li=li: units.length_from_si(ch.gaps(c)[o, li]))
    put(t.add("", "condition", "", np.zeros(len(o))), lambda ch, c: ch.sweeps[c].condition[o])
    missing = [h for h in cols if h not in full.headers()]
    if missing:
        raise NotCovered(f"the fast path names column {missing[0]!r}, which the full table does not have (a bug)")
    return cols


class _LazyTable:
    """The figures' view of one variant's results: the full table's headers, values computed
    on first access for the columns the fast path has (else _NeedsFullTable)."""

    def __init__(self, fs: FastStudy, chunk: _Chunk, c: int) -> None:
        from ..results import Units

        self._fs, self._chunk, self._c = fs, chunk, c
        self._cache: dict = {}
        self.units = Units.of(fs.mech)
        self.n = len(fs.order)
        # a clean sweep (the fast path's only kind: every row converged, no singular point, no
        # sign change of det J_p) has no located limit and nothing between rows to avoid
        self.metadata = {"analysis": "solve", "limits": [], "solver": {"tol": fs.tol}, "clean_sweep": True}

    def headers(self) -> list[str]:
        return self._fs.headers

    def joint_values_si(self) -> np.ndarray:
        """(n, n_q) SI joint values in row order: the sweep's own array, which the ``.q``
        columns show in file units (range_of_motion reads it instead of converting them back)."""
        fs, o = self._fs, self._fs.order
        q = self._chunk.q[self._c][o].copy()
        q[:, fs.mech.q_actuated] = fs.path[o]
        return q

    def column(self, header: str):
        from ..results import Column

        col = self._cache.get(header)
        if col is None:
            spec = self._fs.columns.get(header)
            if spec is None:
                raise _NeedsFullTable(header)
            entity, quantity, unit, producer = spec
            col = self._cache[header] = Column(entity, quantity, unit, np.asarray(producer(self._chunk, self._c)))
        return col

    def __getitem__(self, header: str) -> np.ndarray:
        return self.column(header).values

    def __contains__(self, header: object) -> bool:
        return header in self._fs.headers

    def __len__(self) -> int:
        return self.n


def _check_nominal(fs: FastStudy, full, task) -> None:
    """The nominal through the fast path must give the full evaluation's figures and checks,
    reading only columns the lazy table computes, each equal to the full table's."""
    from .paths import nominal_number
    from .worker import document

    data = document(task.source)[0]
    values = np.array([[nominal_number(data, keys) for keys in task.paths]], dtype=float)
    rows, tables = _evaluate(fs, values, [0])
    if not hasattr(rows[0], "status"):
        raise NotCovered(f"the nominal: {rows[0]}")
    row, table = rows[0], tables[0]
    for a, b in zip(row.figures, (f.value for f in full.figures), strict=True):
        if isinstance(b, float) and isinstance(a, float):
            # the same figures of the same sweep (see below): 1e-8 in file units
            if not (a == b or abs(a - b) <= 1e-8 * max(1.0, abs(b)) or (math.isnan(a) and math.isnan(b))):
                raise NotCovered("a figure of the nominal differs from the full evaluation's")
        elif a != b:
            raise NotCovered("a figure of the nominal differs from the full evaluation's")
    for h in table._cache:
        a, b = table[h], full.table[h]
        if a.dtype.kind == "f":
            # positions / angles of the same sweep: both converge to 1e-10 of the mechanism's
            # size (or rad); 1e-8 file units leaves margin for the unit scales
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-8, atol=1e-8, equal_nan=True):
                raise NotCovered(f"column {h!r} of the nominal differs from the full table's")
        elif not np.array_equal(a, b):
            raise NotCovered(f"column {h!r} of the nominal differs from the full table's")
    if row.status != full.status or row.checks != tuple(c.passed for c in full.checks):
        raise NotCovered("the nominal's verdict differs from the full evaluation's")


# -- evaluation -----------------------------------------------------------------------------------------
def _admissible(values: tuple) -> bool:
    """Every value is what validation accepts for a frame coordinate without error: a finite
    real number (not a bool, not a string with a unit: those go the per-variant way)."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def _evaluate(fs: FastStudy, values: np.ndarray, indices: list) -> tuple[list, list]:
    """Variants with parameter values (V, n_params): per variant its VariantRow (index from
    ``indices``) or why it must take the per-variant path (a str); and the lazy tables."""
    from .figures import evaluate_checks, evaluate_figures
    from .worker import VariantRow, verdict

    t0 = time.perf_counter()
    kernel, V = fs.kernel, len(values)
    g = _geometry(fs, values)
    out: list = [None] * V
    clean, sweeps, times = [], [], []
    for v in range(V):
        t1 = time.perf_counter()
        if not g.planar[v]:
            out[v] = "the variant's frames are not planar"
            continue
        s = kernel.sweep(g, v, fs.path, fs.mech.q_init, fs.tol)
        if not s.clean:
            out[v] = "its sweep met a point that did not converge, a restart or a singular configuration"
        elif fs.has_limits and _outside_limits(fs, g, v, s):
            out[v] = "a joint left its limits"
        else:
            clean.append(v)
            sweeps.append(s)
            times.append(time.perf_counter() - t1)
    chunk = _Chunk(fs, g, clean, sweeps)
    tables: list = [None] * V
    shared = (time.perf_counter() - t0 - sum(times)) / V  # geometry, unclean sweeps: spread evenly
    for c, v in enumerate(clean):
        t1 = time.perf_counter()
        table = _LazyTable(fs, chunk, c)
        try:
            figures = evaluate_figures(fs.figures, table, fs.mech, fs.reference, loops=chunk.loops(c),
                                       points=lambda c=c: chunk.points(c))
            checks = evaluate_checks(fs.spec.checks, table, fs.mech, figures)
        except _NeedsFullTable as exc:
            out[v] = f"a figure or check reads column {exc.args[0]!r}, which the fast path does not compute"
            continue
        status, message = verdict(0, "", checks)
        out[v] = VariantRow(indices[v], status, message, tuple(f.value for f in figures),
                            tuple(c_.passed for c_ in checks), times[c] + shared + time.perf_counter() - t1, FAST)
        tables[v] = table
    return out, tables


def _outside_limits(fs: FastStudy, g, v: int, s) -> bool:
    from ..core.limits import limit_violations
    from ..core.variant_sweep import variant_mechanism

    mech = variant_mechanism(fs.mech, g.T_link_frame[v], g.T_parent_joint[v], g.T_child_joint[v])
    return bool(limit_violations(mech, fs.path, s.q, np.ones(len(s.q), dtype=bool), fs.tol).any())


def fast_rows(task) -> tuple[list, str]:
    """One entry per variant of the chunk: its VariantRow from the fast path, or why the
    per-variant path must evaluate it (a str); and the reason when the fast path covers none of
    the study ('' when it covers it)."""
    fs = prepare(task)
    if isinstance(fs, str):
        return [fs] * len(task.values), fs
    rows: list = ["a value is not a finite number"] * len(task.values)
    good = [k for k, vals in enumerate(task.values) if _admissible(vals)]
    if good:
        values = np.array([task.values[k] for k in good], dtype=float)
        done, _ = _evaluate(fs, values, [task.start + k for k in good])
        for k, row in zip(good, done, strict=True):
            rows[k] = row
    return rows, ""


def nominal_reference(task) -> dict:
    """The nominal frame paths of the path_deviation figures as the fast path computes them, so
    that a variant equal to the nominal deviates by exactly 0 (the coordinator's nominal
    evaluation takes the per-variant path, ~1e-15 m apart); ``task.reference`` itself when the
    fast path does not cover the study."""
    from .figures import frame_path

    fs = prepare(task)
    if isinstance(fs, str) or not task.reference:
        return task.reference
    from .paths import nominal_number
    from .worker import document

    data = document(task.source)[0]
    values = np.array([[nominal_number(data, keys) for keys in task.paths]], dtype=float)
    rows, tables = _evaluate(fs, values, [0])
    if tables[0] is None:
        return task.reference
    try:
        paths = {frame: frame_path(tables[0], frame) for frame in task.reference}
    except _NeedsFullTable:
        return task.reference
    return {k: p if p is not None else task.reference[k] for k, p in paths.items()}


__all__ = ["nominal_reference", "prepare", "fast_rows", "patched_arrays", "FastStudy", "NotCovered", "FAST",
           "PER_VARIANT"]
