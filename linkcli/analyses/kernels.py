"""When an analysis's numba kernels are compiled (:func:`plan`), and compiling every kernel ahead of
time (``linkcli compile``), e.g. when building a container image or a CI cache, so that no later
run compiles or runs interpreted kernels.

numba compiles a kernel (and everything it calls) for the argument types of its first call, and
every analysis passes the same record types whatever the mechanism (planar or spatial, any
elements), so one short run of each analysis on a small built-in mechanism compiles all of them:
a simulation (integrator, saved-sample outputs, reactions), the forces along a sweep
(kinetostatics) and the sweep kernel (the continuation of every sweep: planar and spatial share one
compiled function).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

#: a motor-driven four-bar with a spring, a damper and a point mass (every kind of kernel input)
WARMUP_MECHANISM = """
name: linkcli compile warm-up
kind: planar
units: {length: m, angle: rad}
gravity: [0, -9.81]
links:
  ground: {frames: {O2: [0, 0], O4: [0.4, 0]}}
  crank:
    shape: {type: rod, between: [O2, A], mass: 1.0}
    frames: {O2: [0, 0], A: [0.1, 0]}
  coupler:
    shape: {type: rod, between: [A, B], mass: 1.5}
    frames: {A: [0, 0], B: [0.35, 0]}
  rocker:
    shape: {type: rod, between: [O4, B], mass: 1.2}
    frames: {O4: [0, 0], B: [0.3, 0]}
    masses: {bob: {at: B, mass: 0.2}}
joints:
  crank_pin: {type: revolute, parent: ground.O2, child: crank.O2, actuated: true}
  A: {type: revolute, parent: crank.A, child: coupler.A}
  B: {type: revolute, parent: coupler.B, child: rocker.B}
  O4: {type: revolute, parent: ground.O4, child: rocker.O4}
base: ground
effector: rocker.B
assembly: {crank_pin: 0.7854, A: -0.0936, B: 1.0795, O4: 1.7713}
springs:
  spring: {type: torsional, joint: O4, stiffness: 5.0e+3, free_angle: 2.119}
dampers:
  damper: {type: torsional, joint: O4, damping: 150}
drivers:
  motor: {joint: crank_pin, type: constant_speed, speed: 6.283185}
"""


def plan(kernel_set: str | None, units: float = 0.0, *, many: bool = False):
    """Decide whether this process runs the kernels of ``kernel_set`` (a key of
    :data:`linkcli.core.jit.KERNEL_SETS`) compiled or interpreted, for a run of ``units`` work
    units (:meth:`linkcli.core.jit.KernelSet.work_units`): :func:`linkcli.core.jit.plan_kernels`,
    the measured "ski rental" rule. ``None``: the analysis runs no compiled kernel
    (:func:`linkcli.core.jit.plan_without_kernels`). ``many``: this process makes many runs (a
    batch worker). Call it before anything imports the kernels; idempotent (a second call follows
    the first). Returns the :class:`linkcli.core.jit.Plan`; a bad ``LINKCLI_JIT`` is an
    AnalysisInputError."""
    from ..core import jit
    from ..errors import AnalysisInputError

    try:
        return jit.plan_kernels(kernel_set, units, many=many) if kernel_set else jit.plan_without_kernels()
    except ValueError as exc:  # a bad LINKCLI_JIT
        raise AnalysisInputError(str(exc)) from None


@dataclass(frozen=True)
class CompileReport:
    """``compiled``: numba compiled (or loaded) the kernels; ``cpu_s``: CPU seconds of this process
    so far (interpreter start-up and imports included: what the command costs);
    ``was_cached``: every kernel set (:data:`linkcli.core.jit.KERNEL_SETS`: simulate, forces) was
    already in numba's cache; ``reason``: why not."""

    compiled: bool
    cpu_s: float
    was_cached: bool
    reason: str = ""


def compile_kernels() -> CompileReport:
    """Compile (or load from numba's cache) every kernel in this process and report the CPU
    seconds. Not possible without numba, with ``LINKCLI_JIT=never``/``LINKCLI_NO_JIT``, or in a
    process that already runs interpreted kernels."""
    import numpy as np

    from ..compile import compile_mechanism
    from ..core import jit
    from ..io.loader import validate_document
    from ..io.yaml_source import load_yaml
    from .forces import ForcesRequest, run_forces
    from .inputs import Sweep
    from .simulate import SimulateRequest, run_simulate

    was_cached = all(jit.kernels_cached(name) for name in jit.KERNEL_SETS)
    if not jit.require_compiled():
        reason = ("numba is not installed (pip install 'linkcli[fast]')" if not jit.numba_available() else
                  "kernels run as Python here (LINKCLI_JIT=never or LINKCLI_NO_JIT is set)")
        return CompileReport(False, 0.0, was_cached, reason)
    data, smap = load_yaml(WARMUP_MECHANISM, "<linkcli compile>")
    loaded = validate_document(data, smap, "<linkcli compile>")
    mech = compile_mechanism(loaded.model)
    # each analysis records the compile cost of its kernel set (what its first call compiled)
    outcome = run_simulate(mech, SimulateRequest(t_end=0.01, dt=1e-3), loaded)
    run_forces(mech, ForcesRequest(sweeps=[Sweep("crank_pin", 0.0, 1.0, None, 5)]), loaded)
    from ..core.sweep import solve_sweep

    solve_sweep(mech, np.linspace(0.0, 1.0, 5)[:, None], mech.q_init, method="many")
    if outcome.n_failed:  # pragma: no cover - the built-in model always runs
        raise RuntimeError(f"linkcli compile: the warm-up simulation failed: {outcome.failure}")
    return CompileReport(True, time.process_time(), was_cached)
