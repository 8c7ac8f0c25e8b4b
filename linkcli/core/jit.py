"""Optional numba compilation of scalar-loop kernels, and when to compile them.

Kernels are written once as plain Python functions over scalars and small arrays; where numba is
installed they are compiled with ``numba.njit(cache=True)`` (about 30x faster for the tiny
per-step systems of linkage dynamics, see PERFORMANCE.md), otherwise they run as Python.

Whether a process compiles is decided once, before the first kernel module is imported (the
decorators below read it at import): ``LINKCLI_JIT=auto|always|never`` (default ``auto``;
``LINKCLI_NO_JIT`` set to any non-empty value means ``never`` and wins, e.g. for debugging or
coverage). In ``auto`` mode an analysis that knows its size calls :func:`plan_kernels` first
(a "ski rental" rule, see :func:`decide`) for its kernel set (:data:`KERNEL_SETS`: simulate,
forces; each declares its modules and how a run's cost is projected): with numba's cache of the
kernels on disk they are loaded, unless the run is projected to cost less interpreted than
loading them; on a cold cache they run interpreted while this machine's interpreted CPU time so
far plus this run's projection stays below the measured compile cost, else they are compiled
now. An analysis that runs no kernel but imports kernel modules (the equilibrium) calls
:func:`plan_without_kernels`. Code that imports kernels without a plan (library users of
``linkcli.core``, tests) gets compiled kernels, as before.

The sweep kernel set (``sweep``: :mod:`.sweep_kernel`) is self-contained: it calls no
:func:`maybe_njit` kernel of another module, and its decorator asks :func:`self_contained_numba`
instead of :func:`jit_enabled`, so it is compiled or interpreted per sweep (:mod:`.sweep`'s plan,
with the same :func:`decide` and record) independently of the process-wide mode, and importing
it compiled fixes nothing for the other sets. ``LINKCLI_JIT=never`` and a missing numba apply to
it too.

numba is imported on the first decorated function only, so modules that do not use kernels
(``import linkcli``, the CLI's ``--help``) never pay its import time.

Learning the compile cost: a run that compiles a set on a cold cache records its CPU (less what a
cached run costs) as the set's compile cost, but only when *none* of the modules the set compiles
was cached (:attr:`KernelSet.shared`: simulate and forces share the dynamics kernels). A run that
finds part of them cached (the other set compiled them) compiles only the rest, often in 1-2 s
instead of 13; recording that would make the rule, after an upgrade or with another cache
directory, compile at once for a run projected above the small figure and pay the whole compile,
breaking the 2x bound. Such a partial compile keeps the learned (or measured default) figure and
only restarts the rent.

Caching caveat (numba): a cached kernel is invalidated when *its own* source file changes, not
when a kernel it calls (and may have inlined) changes in another file. After editing kernels,
delete the ``__pycache__`` directories of the kernel packages (an installed release replaces
all files, so it never meets stale code).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])

_numba: Any = None  # the numba module once imported, False when unavailable or disabled


def user_cache_dir() -> str:
    """Per-user cache directory for compiled kernels: ``$XDG_CACHE_HOME/linkcli/numba`` (default
    ``~/.cache``; ``%LOCALAPPDATA%`` on Windows)."""
    from pathlib import Path

    base = os.environ.get("XDG_CACHE_HOME") or os.environ.get("LOCALAPPDATA") or str(Path.home() / ".cache")
    return str(Path(base) / "linkcli" / "numba")


def cache_dir_for(package_dir: str) -> str | None:
    """Where numba should cache the kernels of the package at ``package_dir``: None (numba's
    default, ``__pycache__`` next to the sources) when that is writable, else the per-user
    :func:`user_cache_dir` (a read-only install, e.g. a system site-packages or a container
    image), so the kernels are compiled once per user instead of in every process."""
    from pathlib import Path

    pycache = Path(package_dir) / "__pycache__"
    target = pycache if pycache.exists() else Path(package_dir)
    return None if os.access(target, os.W_OK) else user_cache_dir()


MODES = ("auto", "always", "never")
MODE_ENV, LEGACY_OFF_ENV, RECORD_ENV = "LINKCLI_JIT", "LINKCLI_NO_JIT", "LINKCLI_JIT_RECORD"


def requested_mode() -> str:
    """The mode asked for by the environment: ``never`` when ``LINKCLI_NO_JIT`` is set (any
    non-empty value; it wins), else ``LINKCLI_JIT`` (auto, always, never; default auto).
    Raises ValueError naming the variable and the valid values for anything else."""
    if os.environ.get(LEGACY_OFF_ENV):
        return "never"
    mode = os.environ.get(MODE_ENV, "").strip().lower() or "auto"
    if mode not in MODES:
        raise ValueError(f"{MODE_ENV}={os.environ[MODE_ENV]!r}: expected one of {', '.join(MODES)} "
                         f"(auto: compile when it pays, always: compile, never: run kernels as Python)")
    return mode


def numba_available() -> bool:
    """numba is importable (checked without importing it)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def _set_compiling(compile_kernels: bool) -> None:
    """Fix the process-wide mode (once): import numba, or run kernels as Python. Before numba is
    imported, ``NUMBA_CACHE_DIR`` is pointed at a per-user directory when it is unset and the
    package cannot hold its own cache (:func:`cache_dir_for`)."""
    global _numba
    if _numba is not None:
        return
    if not compile_kernels:
        _numba = False
        return
    _numba = _import_numba() or False


def _import_numba() -> Any:
    """numba, imported after pointing ``NUMBA_CACHE_DIR`` at the per-user directory when it is
    unset and the package cannot hold its own cache (:func:`cache_dir_for`); None when it cannot
    be imported."""
    if not os.environ.get("NUMBA_CACHE_DIR"):
        custom = cache_dir_for(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamics"))
        if custom is not None:
            os.environ["NUMBA_CACHE_DIR"] = custom
    try:
        import numba
    except ImportError:
        return None
    return numba


def mode_fixed() -> bool:
    """The process has fixed its mode (a kernel module was imported, or :func:`plan_kernels` ran)."""
    return _numba is not None


def jit_enabled() -> bool:
    """True when kernels are compiled with numba in this process. Fixed on the first call: by
    :func:`plan_kernels` when an analysis planned its run, else from the environment (``never``
    runs them as Python; ``auto`` and ``always`` compile when numba is importable)."""
    if _numba is None:
        try:
            mode = requested_mode()
        except ValueError:
            mode = "auto"  # an analysis reports the bad value (plan_kernels); a library import does not fail
        _set_compiling(mode != "never")
    return _numba is not False


def compiled_kernels_possible() -> bool:
    """Compiled kernels may be used from now on in this process: the environment does not ask for
    ``never``, numba is importable, and the process has not fixed interpreted kernels (checked
    without importing numba)."""
    try:
        mode = requested_mode()
    except ValueError:
        mode = "auto"
    if mode == "never":
        return False
    return jit_enabled() if mode_fixed() else numba_available()


def self_contained_compiling_possible() -> bool:
    """A self-contained kernel set (one that calls no :func:`maybe_njit` kernel of another
    module: the sweep kernel, :mod:`.sweep_kernel`) may run compiled in this process whatever
    mode the process fixed for the other sets: the environment does not ask for ``never``
    (``LINKCLI_JIT``, ``LINKCLI_NO_JIT``; a bad value counts as ``auto``) and numba is
    importable (checked without importing it)."""
    try:
        mode = requested_mode()
    except ValueError:
        mode = "auto"
    return mode != "never" and numba_available()


def self_contained_numba() -> Any:
    """numba for a self-contained kernel set's own decorator (:func:`self_contained_compiling_possible`),
    imported as :func:`jit_enabled` would (the same cache directory), without fixing the
    process-wide mode of the other kernel sets; None when such a set cannot be compiled."""
    if not self_contained_compiling_possible():
        return None
    return _numba or _import_numba()


def require_compiled() -> bool:
    """Fix this process to compiled kernels (ahead-of-time compilation, ``linkcli compile``);
    False when that is impossible (no numba, ``never``, or fixed to interpreted already)."""
    if not compiled_kernels_possible():
        return False
    _set_compiling(True)
    return jit_enabled()


# --- when to compile: the ski-rental rule -------------------------------------------------------------
#: Measured on the 2-core reference machine (1 Dec 2026, load ~1.4; benchmarks/README.md "First
#: run"): interpreted CPU per work unit of a simulation, where a unit is one step or saved sample
#: times n_bodies ** SIZE_EXPONENT. The exponent is the measured growth of the interpreted cost
#: with the number of bodies (planar four-bar chains of 3, 11, 41 bodies: 0.31, 0.29, 0.29 ms per
#: unit); the banded step solve's work grows a little faster than the body count.
SIZE_EXPONENT = 1.3
DEFAULT_SECONDS_PER_UNIT = 3.0e-4


@dataclass(frozen=True)
class KernelSet:
    """The compiled kernels one analysis runs, and how the cost of a run is projected.

    ``modules``: its kernel modules (paths under ``linkcli/core``), whose numba index files tell
    whether the set is cached (:func:`kernels_cached`); a run's size in work units is
    ``items * n_bodies ** size_exponent`` (:meth:`work_units`; ``item`` says what the analysis
    counts); ``seconds_per_unit``: interpreted CPU per unit and ``compile_s``: CPU of compiling
    the set on an empty cache, both measured defaults that this machine's record replaces
    (:func:`record_run`); ``shared``: the further kernel modules it compiles that other sets
    compile too (when any of them is cached, a cold run compiles only part of the set, and its
    CPU is not recorded as the compile cost)."""

    modules: tuple[str, ...]
    item: str
    size_exponent: float
    seconds_per_unit: float
    compile_s: float
    shared: tuple[str, ...] = ()

    def work_units(self, items: float, n_bodies: int) -> float:
        """``items * n_bodies ** size_exponent`` (at least one body: the items' bookkeeping)."""
        return float(items) * float(max(n_bodies, 1)) ** self.size_exponent


#: Every kernel set and its projection, in one place (benchmarks/README.md "First run" for the
#: measurements). ``forces`` (inverse dynamics along a sweep: constraint rows and applied forces,
#: then reactions, energies and element states per point): interpreted 0.11 ms per point and
#: body, growing linearly with the bodies (planar four-bar chains of 3, 11, 21, 41 bodies: 0.11,
#: 0.10, 0.11, 0.11 ms; spatial models of 3 bodies 0.18-0.20 ms per point and body), compiled
#: ~180-240x faster (1 Dec 2026, load ~1.5); the compile on an empty cache ~13 s of CPU. Its
#: modules are those holding the kernels it calls first (rows_and_forces, model_struct and the
#: helpers are compiled with them).
_DYNAMICS_SHARED = tuple(f"dynamics/{m}.py" for m in ("constraints", "energy", "forces", "inertia", "kinematics",
                                                       "linalg", "reactions"))
KERNEL_SETS: dict[str, KernelSet] = {
    "simulate": KernelSet(("dynamics/integrator.py", "dynamics/node_multipliers.py", "dynamics/outputs.py",
                           "dynamics/structs_generated.py"), "a step or a saved sample", SIZE_EXPONENT,
                          DEFAULT_SECONDS_PER_UNIT, 36.0, _DYNAMICS_SHARED),
    "forces": KernelSet(("kinetostatics.py", "dynamics/outputs.py"), "a point of the motion", 1.0, 1.2e-4, 13.0,
                        _DYNAMICS_SHARED + ("dynamics/node_multipliers.py", "dynamics/structs_generated.py")),
    # the sweep's continuation (core/sweep.py decides per sweep with its own work units, points x
    # the model's size: interpreted 12-26 us per unit on the examples, load ~3; compile ~27 s of
    # CPU at load 5.5, 1 Dec 2026)
    "sweep": KernelSet(("sweep_kernel.py",), "a sweep point times its model's size (sweep._work_units)", 1.0,
                       2.0e-5, 30.0),
}
#: CPU seconds of compiling each kernel set with an empty cache (replaced by this machine's own
#: figure after its first compile)
DEFAULT_COMPILE_S = {name: kset.compile_s for name, kset in KERNEL_SETS.items()}
#: what a run with cached compiled kernels costs beyond the interpreted one's kernel time: importing
#: numba and loading the cached kernels (s of CPU), and the compiled kernels' speed-up
COMPILED_LOAD_S = 0.6
COMPILED_SPEEDUP = 30.0


def work_units(n_steps: int, n_samples: int, n_bodies: int) -> float:
    """Size of a simulation for the cost projection: (steps + saved samples) * bodies**1.3."""
    return KERNEL_SETS["simulate"].work_units(n_steps + n_samples, n_bodies)


def excess_cost(interpreted_s: float) -> float:
    """CPU seconds a run interpreted for ``interpreted_s`` spent beyond what the same run costs
    with cached compiled kernels (numba's load plus the kernels at COMPILED_SPEEDUP): the "rent"
    of the rule. Never negative (a tiny run may be cheaper interpreted than loading numba)."""
    return max(0.0, interpreted_s - (COMPILED_LOAD_S + interpreted_s / COMPILED_SPEEDUP))


@dataclass(frozen=True)
class Plan:
    """What a run does with its kernels. ``compile``: compiled (or loaded from numba's cache)
    rather than interpreted; ``cold``: numba's cache of them is missing, so compiling costs about
    ``compile_s`` seconds of CPU; ``projected_s``: the run's projected interpreted CPU seconds;
    ``reason``: why, in words; ``partial``: cold, but some modules it compiles are cached already
    (:attr:`KernelSet.shared`), so its CPU is not a whole compile's."""

    compile: bool
    cold: bool
    reason: str
    projected_s: float = 0.0
    compile_s: float = 0.0
    partial: bool = False


def decide(mode: str, *, numba_ok: bool, cached: bool, projected_s: float, rent_paid_s: float,
           compile_s: float, many: bool = False) -> Plan:
    """The compile decision as a pure function.

    ``never`` (or no numba) interprets and ``always`` compiles. In ``auto`` mode cached kernels
    are always used; on a cold cache the run is interpreted while ``rent_paid_s`` (the excess CPU
    of earlier interpreted runs on this machine since the last compile, :func:`excess_cost`) plus
    this run's projected excess stays below ``compile_s`` (the compile cost measured on this
    machine), and compiled otherwise. A run projected to cost less interpreted than loading the
    cached kernels (no excess, :func:`excess_cost`) is interpreted even when they are cached.

    Ski rental: with accurate projections, the total CPU over any sequence of runs is at most
    twice that of the best choice in hindsight (compile before the first run, or never). Measured
    against the runs' cost with cached kernels, the rule pays less than ``compile_s`` of excess
    before it compiles and then ``compile_s``, i.e. less than 2 ``compile_s``, only when the excess
    up to that run reached ``compile_s``, which the hindsight choice also pays (as excess, or as
    the compile). A run projected to cost more than a compile compiles at once.

    ``many``: the process will make many runs it cannot count yet (a batch worker); a process
    cannot switch from interpreted to compiled kernels, so it compiles (as ``always``).
    """
    if mode == "never" or not numba_ok:
        return Plan(False, not cached, "interpreted (LINKCLI_JIT=never)" if mode == "never" else "numba not installed",
                    projected_s)
    if mode == "always" or (many and not cached):
        why = "LINKCLI_JIT=always" if mode == "always" else "many runs in this process"
        return Plan(True, not cached, f"compiled ({why})", projected_s, compile_s if not cached else 0.0)
    if cached:  # loading them costs COMPILED_LOAD_S: not worth it for a run shorter than that
        if many or excess_cost(projected_s) > 0.0:
            return Plan(True, False, "compiled kernels cached", projected_s, 0.0)
        return Plan(False, False, f"interpreted: {projected_s:.3g} s projected, less than loading the cached "
                    "kernels", projected_s)
    if rent_paid_s + excess_cost(projected_s) < compile_s:
        return Plan(False, True, f"interpreted: {projected_s:.3g} s projected, {rent_paid_s:.3g} s paid of a "
                    f"{compile_s:.3g} s compile", projected_s, compile_s)
    return Plan(True, True, f"compiling: {projected_s:.3g} s projected interpreted plus {rent_paid_s:.3g} s paid "
                f"reach the {compile_s:.3g} s compile", projected_s, compile_s)


def record_path() -> str:
    """The per-user record of interpreted and compile costs: ``$LINKCLI_JIT_RECORD`` when set,
    else ``jit-record.json`` next to :func:`user_cache_dir`."""
    from pathlib import Path

    return os.environ.get(RECORD_ENV) or str(Path(user_cache_dir()).parent / "jit-record.json")


def read_record() -> dict:
    """The record (``{kernel_set: {"rent_paid_s", "seconds_per_unit", "compile_s", "runs"}}``);
    empty when missing or unreadable (then the measured defaults apply)."""
    import json

    try:
        with open(record_path(), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_record(data: dict) -> None:
    """Replace the record atomically; best effort (a read-only home only loses the learning)."""
    import json
    import tempfile
    from pathlib import Path

    path = Path(record_path())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".jit-record.", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        try:  # the record stays as it was; no temporary file is left at every run
            os.unlink(tmp)
        except OSError:
            pass


def record_entry(record: dict, kernel_set: str) -> dict:
    """The entry of ``kernel_set`` in the record (:func:`read_record`) with every field valid:
    ``rent_paid_s`` (CPU s of interpreted runs beyond compiled ones since the last compile),
    ``seconds_per_unit`` (interpreted CPU s per work unit), ``compile_s`` (CPU s of compiling the
    set on an empty cache), ``runs`` (interpreted runs recorded); a missing, negative or
    non-finite field takes its declared default (:data:`KERNEL_SETS`)."""
    e = record.get(kernel_set)
    e = dict(e) if isinstance(e, dict) else {}

    def num(key, default):
        v = e.get(key)
        return float(v) if isinstance(v, int | float) and math.isfinite(v) and v >= 0 else default

    declared = KERNEL_SETS.get(kernel_set)
    return {"rent_paid_s": num("rent_paid_s", 0.0),
            "seconds_per_unit": num("seconds_per_unit", 0.0) or (declared.seconds_per_unit if declared else
                                                                 DEFAULT_SECONDS_PER_UNIT),
            "compile_s": num("compile_s", 0.0) or DEFAULT_COMPILE_S.get(kernel_set, max(DEFAULT_COMPILE_S.values())),
            "runs": int(num("runs", 0))}


#: the kernel modules of each kernel set (their numba index files tell whether it is cached;
#: tests/test_jit_plan.py checks that a compiled run leaves them)
KERNEL_MODULES = {name: kset.modules for name, kset in KERNEL_SETS.items()}


def kernels_cached(kernel_set: str) -> bool:
    """numba's on-disk cache holds kernels of every module of ``kernel_set`` (no numba import)."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    return all(numba_cache_exists(str(here / m), Path(m).stem + ".*.nbi") for m in KERNEL_MODULES[kernel_set])


def kernels_partly_cached(kernel_set: str) -> bool:
    """numba's on-disk cache holds kernels of some module ``kernel_set`` compiles, its own or
    shared (:attr:`KernelSet.shared`), e.g. compiled by another set (no numba import)."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    kset = KERNEL_SETS[kernel_set]
    return any(numba_cache_exists(str(here / m), Path(m).stem + ".*.nbi") for m in kset.modules + kset.shared)


_plans: dict[str, Plan] = {}


def plan_kernels(kernel_set: str, units: float, *, many: bool = False) -> Plan:
    """Decide (:func:`decide`) and fix this process's mode for a run of ``units`` work units
    (:meth:`KernelSet.work_units`) of ``kernel_set`` (a key of :data:`KERNEL_SETS`), before its kernel
    modules are imported;
    ``many``: see :func:`decide`.
    When the mode is already fixed (kernels imported earlier in the process), the plan follows it.
    Raises ValueError for a bad ``LINKCLI_JIT``."""
    mode = requested_mode()
    e = record_entry(read_record(), kernel_set)
    cached = kernels_cached(kernel_set)
    projected = units * e["seconds_per_unit"]
    if mode_fixed():
        compiled = jit_enabled()
        plan = Plan(compiled, compiled and not cached,
                    "compiled (fixed earlier in this process)" if compiled else "interpreted (fixed earlier in this "
                    "process)", projected, e["compile_s"] if compiled and not cached else 0.0)
    else:
        plan = decide(mode, numba_ok=numba_available(), cached=cached, projected_s=projected,
                      rent_paid_s=e["rent_paid_s"], compile_s=e["compile_s"], many=many)
        _set_compiling(plan.compile)
    if plan.compile and plan.cold and kernels_partly_cached(kernel_set):
        from dataclasses import replace

        plan = replace(plan, partial=True)
    _plans[kernel_set] = plan
    return plan


def plan_without_kernels() -> Plan:
    """Fix this process's mode for an analysis that runs no compiled kernel but imports kernel
    modules for their Python helpers (importing them in a process whose mode is not fixed would
    import numba, and compile the kernels that have an explicit signature, for nothing):
    interpreted, unless ``LINKCLI_JIT=always`` or the mode is fixed already. Raises ValueError
    for a bad ``LINKCLI_JIT``."""
    mode = requested_mode()
    if mode_fixed():
        compiled = jit_enabled()
        return Plan(compiled, False, f"{'compiled' if compiled else 'interpreted'} (fixed earlier in this process)")
    plan = decide(mode, numba_ok=numba_available(), cached=True, projected_s=0.0, rent_paid_s=0.0, compile_s=0.0)
    _set_compiling(plan.compile)
    return plan


def record_run(kernel_set: str, plan: Plan, units: float, cpu_s: float) -> None:
    """Learn from a finished run of ``kernel_set`` that took ``cpu_s`` seconds of CPU (kernel
    import included): an interpreted run adds its excess cost to the rent paid and updates the
    seconds per unit; a run that compiled on a cold cache starts the rent afresh and, when the
    whole set was compiled (not ``plan.partial``), records the compile cost (its CPU less what a
    cached run would have cost)."""
    if units <= 0 or not math.isfinite(cpu_s) or cpu_s < 0:
        return
    record = read_record()
    e = record_entry(record, kernel_set)
    if not plan.compile:
        rate = cpu_s / units
        e["seconds_per_unit"] = rate if e["runs"] == 0 else 0.5 * (rate + e["seconds_per_unit"])
        e["rent_paid_s"] += excess_cost(cpu_s)
        e["runs"] += 1
    elif plan.cold:
        if not plan.partial:  # a partial compile's CPU is not the set's compile cost (module docstring)
            e["compile_s"] = max(cpu_s - COMPILED_LOAD_S - units * e["seconds_per_unit"] / COMPILED_SPEEDUP, 1.0)
        e["rent_paid_s"] = 0.0
    else:
        return
    record[kernel_set] = e
    _write_record(record)


@functools.cache
def borrowed_struct_reads() -> bool:
    """numba has the internals :mod:`.dynamics.structref_access` reads records through without
    reference counting (its MemInfo struct type and structref helpers; present in numba
    0.59-0.68). When a numba release moves them, records are registered by numba's own
    ``structref.register`` and ``maybe_njit(refcount=False)`` keeps reference counting: the
    kernels then run ~25 % slower per step (W3) but still run."""
    try:
        from numba.core.runtime.nrtdynmod import _meminfo_struct_type  # noqa: F401
        from numba.experimental.structref import _Utils  # noqa: F401
    except ImportError:
        return False
    return True


@overload
def maybe_njit(f: F, *, inline: bool = False, signature: str | None = None, refcount: bool = True) -> F: ...
@overload
def maybe_njit(f: None = None, *, inline: bool = False, signature: str | None = None,
               refcount: bool = True) -> Callable[[F], F]: ...
def maybe_njit(f: F | None = None, *, inline: bool = False, signature: str | None = None,
               refcount: bool = True) -> F | Callable[[F], F]:
    """``numba.njit(cache=True)(f)`` when :func:`jit_enabled`, else ``f`` unchanged. Use as
    ``@maybe_njit`` or ``@maybe_njit(inline=True)``; ``inline`` inlines the function into its
    compiled callers at numba's IR level (for hot helpers that LLVM leaves as calls; it costs
    compile time in every caller). ``signature`` (numba's string form, e.g.
    ``"UniTuple(float64, 3)(float64[:, ::1], int64)"``) compiles exactly that one version: for tiny
    helpers called with constant (literal) arguments, of which numba otherwise compiles one copy
    per constant; a call with other types then fails to compile (the test suite would see it).
    ``refcount=False`` compiles without numba's reference counting (``_nrt=False``: no atomic
    increment/decrement per array read from a record or passed on; measured 3.9 -> 3.1 us per
    step of the W3 four-bar, see benchmarks/README.md) for kernels that never allocate, return
    no array to Python and read records only through :mod:`.dynamics.structref_access` (a kernel
    that needs reference counting then fails to compile with "NRT required", not at run time).
    Typed to return the decorated function's own type, so type checkers see the kernel's
    signature through the decorator (a numba dispatcher is called the same way)."""
    def wrap(g: F) -> F:
        if not jit_enabled():
            return g
        options: dict[str, Any] = dict(cache=True, inline="always" if inline else "never")
        if not refcount and borrowed_struct_reads():
            options["_nrt"] = False
        return _numba.njit(signature, **options)(g) if signature else _numba.njit(**options)(g)

    return wrap if f is None else wrap(f)


def numba_cache_exists(module_file: str, pattern: str) -> bool:
    """numba's on-disk cache files matching ``pattern`` (e.g. ``"integrator.*.nbi"``) exist for
    the kernels of ``module_file`` (next to it, or under NUMBA_CACHE_DIR). Found without
    importing numba; used to decide on / announce a first-run compilation."""
    from pathlib import Path

    custom = os.environ.get("NUMBA_CACHE_DIR")
    if custom and _usable_cache_dir(custom):
        return any(Path(custom).rglob(pattern))  # a usable NUMBA_CACHE_DIR: numba caches there only
    # numba's fall-backs, in its order, when NUMBA_CACHE_DIR is unset or unusable (a file in the
    # path, no permission): next to the sources, else its per-user directory
    if any((Path(module_file).parent / "__pycache__").glob(pattern)):
        return True
    places = [cache_dir_for(str(Path(module_file).parent))] if not custom else []
    places.append(str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"))
    return any(p is not None and Path(p).is_dir() and any(Path(p).rglob(pattern)) for p in places)


def _usable_cache_dir(path: str) -> bool:
    """numba can cache in ``path``: it exists as a writable directory or can be created (numba
    checks the same way and falls back to other places otherwise)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.path.isdir(path) and os.access(path, os.W_OK)
