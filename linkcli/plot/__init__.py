"""Pictures of mechanisms: drawings, coupler curves, plots and animations.

Two layers, kept apart so the geometry is testable without a plotting library:

* :mod:`linkcli.plot.scene` (numpy only): *what* to draw for a compiled mechanism at a
  configuration ``q`` -- link bars and polygons, joint circles, slider blocks on guide lines,
  hatched ground marks, the effector path -- as arrays in world coordinates and the file's
  length unit.
* :mod:`linkcli.plot.draw`, :mod:`linkcli.plot.figures`, :mod:`linkcli.plot.animate`
  (matplotlib): render scenes and result tables to PNG/SVG/PDF figures and GIF/MP4 animations.

matplotlib is the optional extra ``linkcli[plot]``. It is imported only by the rendering
modules, and only when a picture is asked for; :func:`require_matplotlib` turns its absence into
:class:`PlotUnavailableError` (a :class:`~linkcli.errors.LinkcliError`: the CLI prints one line
and exits 2). Importing this package is cheap (no numpy, no matplotlib).
"""

from __future__ import annotations

from linkcli.errors import LinkcliError

INSTALL_HINT = 'pip install "linkcli[plot]"'


class PlotUnavailableError(LinkcliError):
    """A picture was asked for but matplotlib (or Pillow, or ffmpeg) is not available."""


def require_matplotlib():
    """Import matplotlib (non-interactive: figures are only written to files) or raise
    PlotUnavailableError saying how to install it. Returns the module."""
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailableError(f"pictures need matplotlib, which is not installed: {INSTALL_HINT}") from None
    return matplotlib


__all__ = ["INSTALL_HINT", "PlotUnavailableError", "require_matplotlib"]
