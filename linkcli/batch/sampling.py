"""Parameter values of every variant of a study, deterministic by construction.

* ``grid``: every combination, the first parameter varying slowest (row-major);
* ``list``: variant i takes the i-th value of each parameter;
* ``random``: uniform in [low, high];
* ``lhs``: Latin hypercube in [low, high] (each parameter's range cut into ``variants`` equal
  strata, one sample per stratum, strata paired at random), scipy.stats.qmc.LatinHypercube;
* ``normal``: ``mean + sd * z`` with z standard normal (``tolerance`` = 3 sd; ``mean`` defaults
  to the value in the mechanism file), for Monte-Carlo tolerance analysis.

Random numbers: variant ``i`` of a random or normal study draws from
``numpy.random.default_rng([seed, i])`` and nothing else, so its values do not depend on the
number of variants, on chunking, on workers or on the executor; growing a study from 1,000 to
10,000 variants keeps the first 1,000. A Latin hypercube is one joint design, so it is drawn
from ``default_rng([seed, variants])`` at once (same seed and size: same design). Values are
computed here, on the coordinating process, and shipped with the tasks.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..analyses.inputs import Sweep
from ..model.study import Study


def parameter_axes(study: Study) -> list[list[Any]]:
    """Values of each parameter of a grid or list study."""
    axes = []
    for name, p in study.parameters.items():
        if p.values is not None:
            axes.append(list(p.values))
        else:
            axes.append([float(v) for v in Sweep(name, p.from_, p.to, p.step, p.num).values()])
    return axes


def variant_count(study: Study) -> int:
    if study.method == "grid":
        return study.grid_size()
    if study.method == "list":
        return len(next(iter(study.parameters.values())).values)
    return int(study.variants)


def sample(study: Study, nominal: Sequence[float | None] = ()) -> list[tuple]:
    """One tuple of parameter values per variant, in variant order. ``nominal``: the file's
    value of each parameter (used as the default mean of a normal study)."""
    method = study.method
    params = list(study.parameters.values())
    if method == "grid":
        return list(itertools.product(*parameter_axes(study)))
    if method == "list":
        return list(zip(*parameter_axes(study), strict=True))
    n = int(study.variants)
    if method == "lhs":
        low = np.array([p.low for p in params], dtype=float)
        high = np.array([p.high for p in params], dtype=float)
        u = _latin_hypercube(len(params), np.random.default_rng([study.seed, n])).random(n)  # (n, d) in [0, 1)
        return [tuple(row) for row in (low + u * (high - low)).tolist()]
    if method == "random":
        low = np.array([p.low for p in params])
        span = np.array([p.high - p.low for p in params])
        return [tuple((low + span * np.random.default_rng([study.seed, i]).random(len(params))).tolist())
                for i in range(n)]
    # normal
    mean = np.array([p.mean if p.mean is not None else nominal[k] for k, p in enumerate(params)], dtype=float)
    sd = np.array([p.sd if p.sd is not None else p.tolerance / 3.0 for p in params])
    return [tuple((mean + sd * np.random.default_rng([study.seed, i]).standard_normal(len(params))).tolist())
            for i in range(n)]


def _latin_hypercube(d: int, rng: np.random.Generator) -> Any:
    """scipy's Latin hypercube engine in ``d`` dimensions drawing from ``rng`` (scipy is
    imported here: a study without lhs never pays for scipy.stats)."""
    from scipy.stats import qmc

    try:
        return qmc.LatinHypercube(d, rng=rng)  # scipy >= 1.15
    except TypeError:  # scipy < 1.15 calls it seed
        return qmc.LatinHypercube(d, seed=rng)


__all__ = ["sample", "variant_count", "parameter_axes"]
