"""Mobility of a mechanism: the Gruebler-Kutzbach count and the rank of the constraint
Jacobian at a configuration, with redundant constraints reported (e.g. a planar loop modelled
with spatial joints has 3 per loop)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .loop_closure import constraints, mechanism_size
from .mechanism import CompiledMechanism


@dataclass(frozen=True)
class MobilityReport:
    """Mobility by counting and by rank at one configuration.

    gruebler: n_q - n_constraints. rank: rank of the constraint Jacobian. mobility: n_q - rank.
    redundant: n_constraints - rank (constraints implied by the others, e.g. a planar loop
    modelled with spatial joints). passive_rank_deficit: how many passive directions the
    actuated variables leave undetermined (0 for a well-actuated mechanism).
    """

    n_q: int
    n_constraints: int
    gruebler: int
    rank: int
    mobility: int
    redundant: int
    passive_rank_deficit: int
    singular_values: np.ndarray


def mobility_report(mech: CompiledMechanism, q: np.ndarray, rtol: float = 1e-9) -> MobilityReport:
    """Rank-based mobility at configuration ``q`` (n_q,). Position rows are scaled by the
    mechanism size so metres and radians weigh alike in the rank decision."""
    J = constraints(mech, q).J
    if mech.n_constraints == 0:
        return MobilityReport(mech.n_q, 0, mech.n_q, 0, mech.n_q, 0, 0, np.zeros(0))
    L = mechanism_size(mech)
    per_loop = np.array([1 / L, 1 / L, 1.0]) if mech.planar else np.array([1 / L] * 3 + [1.0] * 3)
    Js = J * np.tile(per_loop, mech.n_loops)[:, None]
    s = np.linalg.svd(Js, compute_uv=False)
    rank = int(np.sum(s > rtol * max(s.max(initial=0.0), 1.0)))
    mask = np.ones(mech.n_q, dtype=bool)
    mask[mech.q_actuated] = False
    Jp = Js[:, mask]
    sp = np.linalg.svd(Jp, compute_uv=False) if Jp.size else np.zeros(0)
    rank_p = int(np.sum(sp > rtol * max(sp.max(initial=0.0), 1.0)))
    return MobilityReport(mech.n_q, mech.n_constraints, mech.gruebler_mobility, rank, mech.n_q - rank,
                          mech.n_constraints - rank, int(mask.sum()) - rank_p, s)
