"""Assembly from an estimate: the configuration closest to the user's starting estimate.

Newton from the estimate usually lands on the assembly mode the estimate describes. When it
stalls (a poor estimate far from any solution), seeded restarts spread around the estimate are
solved as one batch and the converged solution nearest to the estimate (angles compared
modulo 2 pi) is kept; it is then shifted by whole turns to lie closest to the estimate, so
angles start where the user expects them.
"""

from __future__ import annotations

import numpy as np

from .loop_closure import ConfigurationResult, Status, mechanism_size, passive_indices, solve_configuration
from .mechanism import CompiledMechanism


def _distance(mech: CompiledMechanism, q: np.ndarray, q_ref: np.ndarray) -> np.ndarray:
    """Distance (...,) between configurations: angles modulo 2 pi (rad), lengths relative to
    the mechanism size."""
    d = q - q_ref
    d = np.where(mech.q_is_rotation, (d + np.pi) % (2 * np.pi) - np.pi, d / mechanism_size(mech))
    return np.linalg.norm(d, axis=-1)


def nearest_turn(mech: CompiledMechanism, q: np.ndarray, q_ref: np.ndarray) -> np.ndarray:
    """Shift angles of ``q`` by whole turns towards ``q_ref`` (the configuration is unchanged)."""
    turns = np.round((q - q_ref) / (2 * np.pi))
    return np.where(mech.q_is_rotation, q - 2 * np.pi * turns, q)


def assemble(mech: CompiledMechanism, q_actuated: np.ndarray, q_estimate: np.ndarray, *, tol: float = 1e-10,
             restarts: int = 64, seed: int = 0) -> ConfigurationResult:
    """Solve the configuration at one point (q_actuated (n_act,), q_estimate (n_q,), SI),
    falling back to seeded restarts when Newton from the estimate does not converge."""
    first = solve_configuration(mech, q_actuated, q_estimate, tol=tol)
    if first.status == Status.CONVERGED or restarts == 0:
        return first
    passive = passive_indices(mech)
    rng = np.random.default_rng(seed)
    starts = np.tile(np.asarray(q_estimate, float), (restarts, 1))
    spread = np.where(mech.q_is_rotation[passive], np.pi, mechanism_size(mech))
    starts[:, passive] += rng.uniform(-1.0, 1.0, (restarts, len(passive))) * spread
    many = solve_configuration(mech, np.broadcast_to(q_actuated, (restarts, mech.n_actuated)), starts, tol=tol)
    ok = np.flatnonzero(many.status == Status.CONVERGED)
    if len(ok) == 0:
        return first
    best = ok[np.argmin(_distance(mech, many.q[ok], q_estimate))]
    q = nearest_turn(mech, many.q[best], q_estimate)
    return ConfigurationResult(q, many.status[best], many.residual[best], many.iterations[best] + first.iterations,
                               many.condition[best], many.worst_loop[best])
