"""Optional numba compilation of scalar-loop kernels.

Kernels are written once as plain Python functions over scalars and small arrays; where numba is
installed they are compiled with ``numba.njit(cache=True)`` (about 30x faster for the tiny
per-step systems of linkage dynamics, see PERFORMANCE.md), otherwise they run as Python.
Setting the environment variable ``LINKCLI_NO_JIT`` (to any non-empty value) disables
compilation, e.g. for debugging or coverage.

numba is imported on the first decorated function only, so modules that do not use kernels
(``import linkcli``, the CLI's ``--help``) never pay its import time.

Caching caveat (numba): a cached kernel is invalidated when *its own* source file changes, not
when a kernel it calls (and may have inlined) changes in another file. After editing kernels,
delete the ``__pycache__`` directories of the kernel packages (an installed release replaces
all files, so it never meets stale code).
"""

from __future__ import annotations

import os
from typing import Any, Callable, TypeVar, overload

F = TypeVar("F", bound=Callable[..., Any])

_numba: Any = None  # the numba module once imported, False when unavailable or disabled


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


@overload
def maybe_njit(f: F, *, inline: bool = False) -> F: ...
@overload
def maybe_njit(f: None = None, *, inline: bool = False) -> Callable[[F], F]: ...
def maybe_njit(f: F | None = None, *, inline: bool = False) -> F | Callable[[F], F]:
    """``numba.njit(cache=True)(f)`` when :func:`jit_enabled`, else ``f`` unchanged. Use as
    ``@maybe_njit`` or ``@maybe_njit(inline=True)``; ``inline`` inlines the function into its
    compiled callers at numba's IR level (for hot helpers that LLVM leaves as calls; it costs
    compile time in every caller). Typed to return the decorated function's own type, so type
    checkers see the kernel's signature through the decorator (a numba dispatcher is called the
    same way)."""
    def wrap(g: F) -> F:
        if not jit_enabled():
            return g
        return _numba.njit(cache=True, inline="always" if inline else "never")(g)

    return wrap if f is None else wrap(f)


def numba_cache_exists(module_file: str, pattern: str) -> bool:
    """numba's on-disk cache files matching ``pattern`` (e.g. ``"integrator.*.nbi"``) exist for
    the kernels of ``module_file`` (next to it, or under NUMBA_CACHE_DIR). Found without
    importing numba; used to decide on / announce a first-run compilation."""
    from pathlib import Path

    if any((Path(module_file).parent / "__pycache__").glob(pattern)):
        return True
    custom = os.environ.get("NUMBA_CACHE_DIR")
    return custom is not None and custom != "" and any(Path(custom).rglob(pattern))
