"""Dynamics of linkages in maximal coordinates with a variational integrator.

Every link except the base is a rigid body (planar: x, y, angle; spatial: position and
rotation matrix); joints and motion drivers are holonomic constraints between body frames.
:func:`simulate` integrates with a RATTLE-type variational scheme (Lie-group update for
spatial rotations, discrete Lagrange-d'Alembert dampers) and returns a
:class:`SimulationResult`. Numerics only: no I/O. Kernels are compiled with numba when it is
installed (see :mod:`linkcli.core.jit`).
"""

from .result import SimulationResult
from .runner import simulate

__all__ = ["SimulationResult", "simulate"]
