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
from collections.abc import Callable
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


def jit_enabled() -> bool:
    """True when kernels are compiled with numba (numba importable and LINKCLI_NO_JIT unset).
    Before numba is imported, ``NUMBA_CACHE_DIR`` is pointed at a per-user directory when it is
    unset and the package cannot hold its own cache (:func:`cache_dir_for`)."""
    global _numba
    if _numba is None:
        if os.environ.get("LINKCLI_NO_JIT"):
            _numba = False
        else:
            if not os.environ.get("NUMBA_CACHE_DIR"):
                custom = cache_dir_for(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamics"))
                if custom is not None:
                    os.environ["NUMBA_CACHE_DIR"] = custom
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
    custom = os.environ.get("NUMBA_CACHE_DIR") or cache_dir_for(str(Path(module_file).parent))
    return custom is not None and any(Path(custom).rglob(pattern))
