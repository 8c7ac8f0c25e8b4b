"""Render a :class:`~linkcli.plot.scene.Scene` on matplotlib axes (2-D, or 3-D with mplot3d).

Nothing here computes geometry: every coordinate comes from the scene. Each artist gets a
``gid`` naming what it shows (``link:coupler``, ``joint:A``, ``slider:slide``, ``guide:slide``,
``ground:0``, ``ground_strip:0``, ``label:joint:A``, ``effector``, ``path:coupler.P``) so tests
and animations find them, and SVG files carry them as element ids.

matplotlib is imported by the functions that need it; callers go through
:func:`linkcli.plot.require_matplotlib` first (figures.py does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .scene import Scene

LINK_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
PATH_COLOR = "#d62728"
GUIDE_COLOR = "0.35"
BAR_WIDTH = 5.0  # points


def link_color(k: int) -> str:
    return LINK_COLORS[k % len(LINK_COLORS)]


def new_figure(figsize=(6.4, 4.8)):
    """A matplotlib Figure that is not managed by pyplot (no GUI backend, no global state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def add_scene_axes(fig, scene: Scene, subplot: Any = 111):
    """Axes suited to the scene: 2-D for planar mechanisms, 3-D (mplot3d) for spatial ones."""
    if scene.planar:
        return fig.add_subplot(subplot)
    import mpl_toolkits.mplot3d  # noqa: F401  (registers the 3d projection)

    return fig.add_subplot(subplot, projection="3d")


# --- drawing ------------------------------------------------------------------------------------
def draw_scene(ax, scene: Scene, *, labels: bool = False, path: np.ndarray | None = None,
               path_label: str | None = None, traced: bool = False, path_dots: bool | None = None) -> dict[str, Any]:
    """Draw the scene (and an effector ``path`` (n, 3), file units) on ``ax``. Returns the
    artists by gid. ``traced``: also a second, emphasised path artist (``trace``) that an
    animation fills frame by frame. ``path_dots``: the path as dots (a grid of inputs) or a
    line; None: dots when consecutive points jump (:func:`_is_grid`; the caller says it when
    the points are not equally spaced rows, e.g. decimated ones)."""
    artists: dict[str, Any] = {}
    if scene.planar:
        _draw_2d(ax, scene, artists, labels)
    else:
        _draw_3d(ax, scene, artists, labels)
    if path is not None:
        _draw_path(ax, scene, path, artists, path_label or f"path of {scene.effector_name}", traced, path_dots)
    return artists


def _draw_2d(ax, scene: Scene, artists: dict, labels: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, Polygon

    def add_line(gid, xy, **kw):
        line = Line2D(xy[:, 0], xy[:, 1], gid=gid, **kw)
        ax.add_line(line)
        artists[gid] = line

    def add_patch(gid, patch):
        patch.set_gid(gid)
        ax.add_patch(patch)
        artists[gid] = patch

    r = scene.joint_radius
    for k, g in enumerate(scene.grounds):
        add_patch(f"ground_strip:{k}", Polygon(g.strip[:, :2], closed=True, fill=False, hatch="////",
                                               edgecolor="0.3", linewidth=0.0, zorder=1))
        add_line(f"ground_line:{k}", g.strip[:2], color="0.2", linewidth=1.0, zorder=1)
        add_patch(f"ground:{k}", Polygon(g.triangle[:, :2], closed=True, facecolor="0.85", edgecolor="0.2",
                                         linewidth=1.0, zorder=2))
    for s in scene.sliders:
        add_line(f"guide:{s.name}", s.guide, color=GUIDE_COLOR, linewidth=1.5, zorder=1)
        if s.strip is not None:
            add_patch(f"guide_strip:{s.name}", Polygon(s.strip[:, :2], closed=True, fill=False, hatch="////",
                                                       edgecolor="0.3", linewidth=0.0, zorder=1))
    for k, link in enumerate(scene.links):
        color = link_color(k)
        gid = f"link:{link.name}"
        if link.kind == "bar":
            add_line(gid, link.outline, color=color, linewidth=BAR_WIDTH, solid_capstyle="round", alpha=0.9,
                     zorder=2.5)
        elif link.kind == "polygon":
            add_patch(gid, Polygon(link.outline[:, :2], closed=True, facecolor=color, alpha=0.35, edgecolor=color,
                                   linewidth=2.0, zorder=2.4))
        elif len(link.outline):
            add_line(gid, link.outline, color=color, marker="s", markersize=6, linestyle="none", zorder=2.5)
    for k, s in enumerate(scene.sliders):
        owner = next((i for i, link in enumerate(scene.links) if link.name == s.link), k)
        add_patch(f"slider:{s.name}", Polygon(s.block[:, :2], closed=True, facecolor=link_color(owner), alpha=0.85,
                                              edgecolor="0.1", linewidth=1.2, zorder=3))
    for j in scene.joints:
        if j.type in ("prismatic", "fixed"):
            continue
        face = "white" if j.type == "revolute" else "0.75"
        add_patch(f"joint:{j.name}", Circle(j.position[:2], r, facecolor=face, edgecolor="0.1", linewidth=1.2,
                                            zorder=4))
    eff = Line2D([scene.effector[0]], [scene.effector[1]], gid="effector", marker="o", markersize=4,
                 color=PATH_COLOR, linestyle="none", zorder=5)
    ax.add_line(eff)
    artists["effector"] = eff
    if labels:
        for lab in scene.labels:
            gid = f"label:{lab.kind}:{lab.text}"
            dx, dy = lab.direction[0], lab.direction[1]
            style = dict(fontsize=8, zorder=6, ha="left" if dx > 0.3 else "right" if dx < -0.3 else "center",
                         va="bottom" if dy > 0.3 else "top" if dy < -0.3 else "center")
            if lab.kind == "link":
                style.update(style="italic", color="0.15")
            elif lab.kind == "effector":
                style.update(color=PATH_COLOR)
            artists[gid] = ax.text(lab.position[0], lab.position[1], lab.text, gid=gid, **style)
    ax.set_xlabel(f"x [{scene.unit}]")
    ax.set_ylabel(f"y [{scene.unit}]")


def _draw_3d(ax, scene: Scene, artists: dict, labels: bool) -> None:
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    def add_line(gid, xyz, **kw):
        (line,) = ax.plot(xyz[:, 0], xyz[:, 1], xyz[:, 2], gid=gid, **kw)
        artists[gid] = line

    def add_poly(gid, verts, **kw):
        poly = Poly3DCollection([verts], gid=gid, **kw)
        poly.linkcli_xyz = np.array(verts)  # matplotlib has no public getter for 3-D vertices
        ax.add_collection3d(poly)
        artists[gid] = poly

    r = scene.joint_radius
    for k, g in enumerate(scene.grounds):
        add_poly(f"ground:{k}", g.triangle, facecolor="0.85", edgecolor="0.2", linewidth=1.0)
        add_poly(f"ground_strip:{k}", g.strip, facecolor="none", edgecolor="0.3", hatch="////", linewidth=0.5)
    for s in scene.sliders:
        add_line(f"guide:{s.name}", s.guide, color=GUIDE_COLOR, linewidth=1.5)
        add_poly(f"slider:{s.name}", s.block, facecolor="0.6", edgecolor="0.1", alpha=0.85, linewidth=1.0)
    for k, link in enumerate(scene.links):
        color = link_color(k)
        gid = f"link:{link.name}"
        if link.kind == "bar":
            add_line(gid, link.outline, color=color, linewidth=BAR_WIDTH - 1, solid_capstyle="round")
        elif link.kind == "polygon":
            add_poly(gid, link.outline, facecolor=color, alpha=0.35, edgecolor=color, linewidth=2.0)
        elif len(link.outline):
            add_line(gid, link.outline, color=color, marker="s", markersize=6, linestyle="none")
    for j in scene.joints:
        if j.type in ("prismatic", "fixed"):
            continue
        if j.type in ("revolute", "cylindrical"):  # a short stroke along the axis shows its direction
            add_line(f"axis:{j.name}", np.array([j.position - 2.5 * r * j.axis, j.position + 2.5 * r * j.axis]),
                     color="0.2", linewidth=1.5)
        face = "white" if j.type == "revolute" else "0.75"
        add_line(f"joint:{j.name}", j.position[None], marker="o", markersize=7, markerfacecolor=face,
                 markeredgecolor="0.1", linestyle="none")
    add_line("effector", scene.effector[None], marker="o", markersize=4, color=PATH_COLOR, linestyle="none")
    if labels:
        for lab in scene.labels:
            gid = f"label:{lab.kind}:{lab.text}"
            color = PATH_COLOR if lab.kind == "effector" else "0.15"
            artists[gid] = ax.text(*lab.position, lab.text, gid=gid, fontsize=8, color=color,
                                   style="italic" if lab.kind == "link" else "normal")
    ax.set_xlabel(f"x [{scene.unit}]")
    ax.set_ylabel(f"y [{scene.unit}]")
    ax.set_zlabel(f"z [{scene.unit}]")


def _draw_path(ax, scene: Scene, path: np.ndarray, artists: dict, label: str, traced: bool,
               dots: bool | None = None) -> None:
    path = np.asarray(path, float).reshape(-1, 3)
    style = dict(color=PATH_COLOR, linewidth=1.5, zorder=4.5)
    if len(path) > 1 and (_is_grid(path) if dots is None else dots):
        style.update(marker=".", linestyle="none", markersize=4)
    if traced:
        style.update(alpha=0.3)
    gid = f"path:{scene.effector_name}"
    if scene.planar:
        (line,) = ax.plot(path[:, 0], path[:, 1], gid=gid, label=label, **style)
    else:
        style.pop("zorder")
        (line,) = ax.plot(path[:, 0], path[:, 1], path[:, 2], gid=gid, label=label, **style)
    artists[gid] = line
    if traced:
        style.update(alpha=1.0, linewidth=2.0)
        if scene.planar:
            (trace,) = ax.plot([], [], gid="trace", **style)
        else:
            (trace,) = ax.plot([], [], [], gid="trace", **style)
        artists["trace"] = trace


def _is_grid(path: np.ndarray) -> bool:
    """A path whose consecutive points jump (a 2-D grid of inputs) is drawn as dots."""
    ok = np.all(np.isfinite(path), axis=1)
    p = path[ok]
    if len(p) < 3:
        return False
    steps = np.linalg.norm(np.diff(p, axis=0), axis=1)
    med = np.median(steps)
    return bool(med > 0 and steps.max() > 4 * med)


# --- limits -------------------------------------------------------------------------------------
def set_limits(ax, scene: Scene, extra: np.ndarray | None = None, margin: float = 0.08,
               view: tuple[float, float] | None = None) -> None:
    """Equal axes around the scene (and ``extra`` points, e.g. a path or every animation
    frame) with a margin; 3-D axes get a cube and the ``view`` (elevation, azimuth in deg)."""
    b = scene.bounds(extra)
    span = b[1] - b[0]
    if scene.planar:
        pad = margin * max(span[0], span[1], scene.size * 0.1)
        ax.set_xlim(b[0, 0] - pad, b[1, 0] + pad)
        ax.set_ylim(b[0, 1] - pad, b[1, 1] + pad)
        ax.set_aspect("equal", adjustable="box")
        ax.grid(True, linewidth=0.4, alpha=0.5)
        return
    half = 0.5 * max(span.max(), scene.size * 0.1) * (1 + 2 * margin)
    c = 0.5 * (b[0] + b[1])
    ax.set_xlim(c[0] - half, c[0] + half)
    ax.set_ylim(c[1] - half, c[1] + half)
    ax.set_zlim(c[2] - half, c[2] + half)
    ax.set_box_aspect((1, 1, 1))
    from matplotlib.ticker import MaxNLocator

    for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
        axis.set_major_locator(MaxNLocator(5))
    elev, azim = view if view is not None else (25.0, -60.0)
    ax.view_init(elev=elev, azim=azim)


# --- animation updates --------------------------------------------------------------------------
def update_scene(artists: dict[str, Any], scene: Scene) -> list:
    """Move the artists drawn by :func:`draw_scene` to another scene of the same mechanism.
    Returns the artists changed."""
    changed = []

    def line(gid, xyz):
        a = artists.get(gid)
        if a is None:
            return
        if scene.planar:
            a.set_data(xyz[:, 0], xyz[:, 1])
        else:
            a.set_data_3d(xyz[:, 0], xyz[:, 1], xyz[:, 2])
        changed.append(a)

    def poly(gid, xyz):
        a = artists.get(gid)
        if a is None:
            return
        if scene.planar:
            a.set_xy(xyz[:, :2])
        else:
            a.set_verts([xyz])
            a.linkcli_xyz = np.array(xyz)
        changed.append(a)

    for link in scene.links:
        gid = f"link:{link.name}"
        (poly if link.kind == "polygon" else line)(gid, link.outline)
    for s in scene.sliders:
        line(f"guide:{s.name}", s.guide)
        poly(f"slider:{s.name}", s.block)
        if s.strip is not None:
            poly(f"guide_strip:{s.name}", s.strip)
    for j in scene.joints:
        a = artists.get(f"joint:{j.name}")
        if a is not None:
            if scene.planar:
                a.set_center(j.position[:2])
                changed.append(a)
            else:
                line(f"joint:{j.name}", j.position[None])
        line(f"axis:{j.name}", np.array([j.position - 2.5 * scene.joint_radius * j.axis,
                                         j.position + 2.5 * scene.joint_radius * j.axis]))
    line("effector", scene.effector[None])
    for lab in scene.labels:
        a = artists.get(f"label:{lab.kind}:{lab.text}")
        if a is not None:
            if scene.planar:
                a.set_position(lab.position[:2])
            else:
                a.set_position_3d(lab.position)
            changed.append(a)
    return changed


__all__ = ["new_figure", "add_scene_axes", "draw_scene", "set_limits", "update_scene", "link_color"]
