"""Dynamics of linkages in maximal coordinates with a variational integrator.

``simulate(mech, q0, qd0, *, t_end, dt, every=1, tol=1e-10, max_iter=20, progress=None)``
returns a :class:`SimulationResult` (see its docstring for every array, shape and unit);
``simulate_chunks(..., on_rows=...)`` hands the same rows over in chunks (bounded memory).

Model: every link except the base is a rigid body (planar mechanisms: x, y, angle with mass
matrix diag(m, m, Izz); spatial: CG position and rotation matrix); joints and motion drivers
are holonomic constraints between the bodies' joint frames (:mod:`.constraints`). Dependent
constraint rows (spatial models of planar loops, Bennett) are dropped at the start and checked
after every step (closed to ``tol`` times the mechanism size); the independent rows are picked
again when a step meets a singular matrix, opens a dropped row or flips the solved rows'
orientation (the subset lost rank where all rows have not); reactions are the minimum-norm
ones, with a warning.

Integrator (:mod:`.integrator`): RATTLE-type discrete Euler-Lagrange equations, second order,
constraints solved by Newton to ``tol`` at every step; Lee-Leok-McClamroch Lie-group update for
spatial rotations; dampers by discrete Lagrange-d'Alembert forces. Loads: gravity and springs
are potentials; constant loads are not (their work is ``work_loads``), so that
``total - total[0] = work_drivers + work_dampers + work_loads`` to O(dt^2).

Numerics only (no I/O). Kernels are compiled with numba when available (:mod:`linkcli.core.jit`);
numba is imported with this package, not with ``linkcli``.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import SimulationResult
    from .runner import SimulationRun, simulate, simulate_chunks

__all__ = ["SimulationResult", "SimulationRun", "simulate", "simulate_chunks"]
_LAZY = {"SimulationResult": "result", "SimulationRun": "runner", "simulate": "runner", "simulate_chunks": "runner"}


def __getattr__(name: str):
    """The runner (and the integrator's kernels it imports) only on first use: the forces'
    kinetostatics imports this package's bodies, model and output kernels, not the integrator."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
