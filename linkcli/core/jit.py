"""Optional numba compilation of scalar-loop kernels.

Kernels are written once as plain Python functions over scalars and small arrays; where numba is
installed they are compiled with ``numba.njit(cache=True)`` (about 30x faster for the tiny
per-step systems of linkage dynamics, see PERFORMANCE.md), otherwise they run as Python.
Setting the environment variable ``LINKCLI_NO_JIT`` (to any non-empty value) disables
compilation, e.g. for debugging or coverage.

numba is imported on the first decorated function only, so modules that do not use kernels
(``import linkcli``, the CLI's ``--help``) never pay its import time.
"""

from __future__ import annotations

import os
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

_numba = None  # the numba module once imported, False when unavailable or disabled


def jit_enabled() -> bool:
    """True when kernels are compiled with numba (numba importable and LINKCLI_NO_JIT unset)."""
    global _numba
    if _numba is None:
        if os.environ.get("LINKCLI_NO_JIT"):
            _numba = False
        else:
            try:
                import numba
            except ImportError:
                _numba = False
            else:
                _numba = numba
    return _numba is not False


def maybe_njit(f: F) -> F:
    """``numba.njit(cache=True)(f)`` when :func:`jit_enabled`, else ``f`` unchanged."""
    if jit_enabled():
        return _numba.njit(cache=True)(f)
    return f
