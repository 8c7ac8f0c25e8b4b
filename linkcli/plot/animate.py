"""Animations (matplotlib.animation): the mechanism moving through a sequence of configurations
(a solve sweep or a simulation), tracing its effector path, written as GIF (Pillow) or MP4
(ffmpeg).

Every frame is a :class:`~linkcli.plot.scene.Scene` built with the same symbol size and slider
stroke, so only positions change; the artists drawn for the first frame are moved, not redrawn.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.mechanism import CompiledMechanism
from ..errors import AnalysisInputError
from . import INSTALL_HINT, PlotUnavailableError, require_matplotlib
from .draw import add_scene_axes, draw_scene, new_figure, set_limits, update_scene
from .figures import _scene_figsize, wrap_title
from .scene import build_scene, effector_path, frame_indices, q_range_of, reference_size

ANIMATION_FORMATS = ("gif", "mp4")


def check_animation_path(path: str | os.PathLike) -> str:
    """``gif`` or ``mp4`` from the extension (AnalysisInputError otherwise); checks that the
    writer is available (Pillow for GIF, ffmpeg for MP4) before anything is computed."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in ANIMATION_FORMATS:
        raise AnalysisInputError(f"cannot write an animation to '{os.fspath(path)}': use a file ending in .gif or .mp4")
    require_matplotlib()
    if ext == "gif":
        try:
            import PIL  # noqa: F401
        except ImportError:
            raise PlotUnavailableError(f"GIF animations need Pillow, which is not installed: {INSTALL_HINT}") from None
    else:
        from matplotlib.animation import FFMpegWriter

        if not FFMpegWriter.isAvailable():
            raise PlotUnavailableError("MP4 animations need ffmpeg, which was not found on PATH: install ffmpeg "
                                       "(e.g. apt install ffmpeg, brew install ffmpeg) or write a .gif instead")
    return ext


def animation_frames(mech: CompiledMechanism, q: np.ndarray, frames: int | None):
    """Rows of q (n, n_q) SI that assembled, subsampled to at most ``frames``: (rows, q_ok)."""
    q = np.atleast_2d(np.asarray(q, float))
    ok = np.flatnonzero(np.all(np.isfinite(q), axis=1))
    if len(ok) == 0:
        raise AnalysisInputError("no configuration assembled: there is nothing to animate")
    rows = ok[frame_indices(len(ok), frames)]
    return rows, q[ok]


def animate(mech: CompiledMechanism, q: np.ndarray, path: str | os.PathLike, *, fps: float = 25.0,
            frames: int | None = None, captions: Sequence[str] | None = None, labels: bool = False,
            view: tuple[float, float] | None = None, dpi: float = 80, title: str | None = None) -> int:
    """Write an animation of configurations q (n, n_q) SI to ``path`` (.gif or .mp4), at most
    ``frames`` frames (evenly subsampled; rows that did not assemble are skipped), with the
    effector path over all rows (faint) and traced up to the current frame. ``captions`` (n,)
    texts shown per row (e.g. the input value or the time). Returns the number of frames."""
    fmt = check_animation_path(path)
    from matplotlib.animation import FFMpegWriter, PillowWriter

    q = np.atleast_2d(np.asarray(q, float))
    rows, q_ok = animation_frames(mech, q, frames)
    size = reference_size(mech, q_ok)
    q_range = q_range_of(q_ok)
    scenes = [build_scene(mech, q[i], size=size, q_range=q_range) for i in rows]
    eff = effector_path(mech, q)
    extra = np.concatenate([s.all_points() for s in scenes] + [eff])
    fig = new_figure(_scene_figsize(scenes[0], extra))
    ax = add_scene_axes(fig, scenes[0])
    artists = draw_scene(ax, scenes[0], labels=labels, path=eff, traced=True)
    set_limits(ax, scenes[0], extra=extra, view=view)
    ax.legend(loc="upper right", fontsize=8)
    head = wrap_title(title if title is not None else mech.name)
    text = ax.set_title(head, fontsize=10)
    trace = artists["trace"]

    def update(k: int):
        changed = update_scene(artists, scenes[k])
        upto = eff[: rows[k] + 1]
        if scenes[k].planar:
            trace.set_data(upto[:, 0], upto[:, 1])
        else:
            trace.set_data_3d(upto[:, 0], upto[:, 1], upto[:, 2])
        if captions is not None:
            text.set_text(f"{head}\n{captions[rows[k]]}")
        return changed + [trace, text]

    update(0)
    _freeze_layout(fig, dpi)
    writer = PillowWriter(fps=fps) if fmt == "gif" else FFMpegWriter(fps=fps, codec="h264",
                                                                    extra_args=["-pix_fmt", "yuv420p"])

    def write_frames(tmp: str) -> None:  # one draw per frame (FuncAnimation draws twice)
        with writer.saving(fig, tmp, dpi):
            for k in range(len(scenes)):
                update(k)
                writer.grab_frame()

    from ..io.writers import atomic_path

    with atomic_path(path, suffix=f".{fmt}") as tmp:
        write_frames(tmp)
    return len(scenes)


def _freeze_layout(fig, dpi: float) -> None:
    """Lay the figure out once (constrained layout, with the first frame's two-line title) and
    keep that layout: re-running the layout engine for every frame doubles the drawing time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    fig.canvas.draw()
    fig.set_layout_engine("none")


__all__ = ["ANIMATION_FORMATS", "check_animation_path", "animation_frames", "animate"]
