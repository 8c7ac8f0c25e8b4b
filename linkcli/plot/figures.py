"""Standard figures (matplotlib): a mechanism drawing, the solve figure (coupler path on the
mechanism, joint variables, transmission angle, velocity ratios), a figure of chosen table
columns, and the simulation figure (joint variables, driver loads, reactions, energy balance).

Figures are built from scenes (:mod:`linkcli.plot.scene`) and from result-table columns found
by name (``J.q [deg]``, ``B.transmission [deg]``, ``J.qd [deg/s]``, ``t [s]``, ``energy.total [J]``
...), so a new column in a table shows up without code here. Every function returns a
matplotlib ``Figure`` not managed by pyplot; :func:`save_figure` writes it atomically.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.mechanism import CompiledMechanism
from ..errors import AnalysisInputError
from ..results import TableStream
from . import PlotUnavailableError, require_matplotlib
from .draw import add_scene_axes, draw_scene, new_figure, set_limits
from .scene import Scene, build_scene, effector_path, q_from_table, q_range_of, reference_size, swept_inputs

FIGURE_FORMATS = ("png", "svg", "pdf")
SVG_HASH_SALT = "linkcli"  #: fixed salt of the ids in SVG files (byte-identical reruns)
TRANSMISSION_LIMITS_DEG = (40.0, 140.0)  # usual limits of a good transmission angle


# --- output -------------------------------------------------------------------------------------
def check_figure_path(path: str | os.PathLike, formats: Sequence[str] = FIGURE_FORMATS) -> str:
    """The format of a picture file from its extension; AnalysisInputError (exit 2) when it is
    not one of ``formats``, PlotUnavailableError when matplotlib is missing. Call it before any
    computation so a typo costs nothing."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in formats:
        raise AnalysisInputError(f"cannot write a picture to '{os.fspath(path)}': use a file ending in "
                                 + ", ".join(f".{f}" for f in formats))
    require_matplotlib()
    return ext


def save_figure(fig, path: str | os.PathLike, dpi: float = 100) -> None:
    """Write the figure to ``path`` (format from the extension) atomically: a temporary file in
    the same directory renamed over the target, so a failed write leaves no partial picture."""
    import matplotlib

    from ..io.writers import atomic_path

    fmt = check_figure_path(path)
    # identical runs give identical files: SVG clip-path and other ids are hashes salted with a
    # random uuid unless svg.hashsalt is set (PDF/PNG dates are left out by _metadata)
    with matplotlib.rc_context({"svg.hashsalt": SVG_HASH_SALT}), atomic_path(path, suffix=f".{fmt}") as tmp:
        fig.savefig(tmp, format=fmt, dpi=dpi, metadata=_metadata(fmt))


def _metadata(fmt: str) -> dict:
    from linkcli import __version__

    software = f"linkcli {__version__}"
    if fmt == "png":
        return {"Software": software}
    if fmt == "pdf":
        return {"Creator": software, "CreationDate": None}  # reproducible files
    return {"Creator": software, "Date": None}


# --- mechanism drawing --------------------------------------------------------------------------
def _scene_figsize(scene: Scene, extra: np.ndarray | None = None) -> tuple[float, float]:
    if not scene.planar:
        return (6.4, 5.6)
    b = scene.bounds(extra)
    span = np.maximum(b[1] - b[0], 1e-12)
    ratio = float(np.clip(span[1] / span[0], 0.35, 1.6))
    return (6.4, 1.0 + 5.2 * ratio)


def mechanism_figure(scene: Scene, *, labels: bool = False, path: np.ndarray | None = None,
                     view: tuple[float, float] | None = None, title: str | None = None):
    """The mechanism at one configuration (and an effector path), equal axes, units on the axes."""
    require_matplotlib()
    fig = new_figure(_scene_figsize(scene, path))
    ax = add_scene_axes(fig, scene)
    draw_scene(ax, scene, labels=labels, path=path)
    set_limits(ax, scene, extra=path, view=view)
    ax.set_title(wrap_title(title if title is not None else scene.name), fontsize=10)
    if path is not None:
        ax.legend(loc="best", fontsize=8)
    return fig


# --- solve --------------------------------------------------------------------------------------
def _q_header(mech: CompiledMechanism, i: int, quantity: str = "q", per: str = "") -> str:
    unit = mech.angle_unit if mech.q_is_rotation[i] else mech.length_unit
    return f"{mech.q_names[i]}.{quantity} [{unit}{'/' + per if per else ''}]"


def _x_variable(mech: CompiledMechanism, q: np.ndarray, x_name: str | None) -> int | None:
    """Index of the variable on the x axis: ``x_name`` (the first swept input), else the first
    actuated variable that changes; None for a single configuration."""
    if x_name is not None and x_name in mech.q_names:
        return mech.q_names.index(x_name)
    swept = swept_inputs(mech, q)
    return swept[0] if swept else None


def _first_valid(q: np.ndarray) -> int | None:
    ok = np.flatnonzero(np.all(np.isfinite(q), axis=1))
    return int(ok[0]) if len(ok) else None


def _values_text(mech: CompiledMechanism, q: np.ndarray, idx: Sequence[int]) -> str:
    parts = []
    for i in idx:
        rot = mech.q_is_rotation[i]
        v = q[i] / (mech.angle_scale if rot else mech.length_scale)
        parts.append(f"{mech.q_names[i]} = {v:.4g} {mech.angle_unit if rot else mech.length_unit}")
    return ", ".join(parts)


def wrap_title(text: str, width: int = 64) -> str:
    """Long titles (many actuated values) on several lines."""
    import textwrap

    return "\n".join(textwrap.fill(line, width, break_long_words=False) for line in text.split("\n"))


def solve_figure(mech: CompiledMechanism, table, *, x_name: str | None = None, labels: bool = False,
                 view: tuple[float, float] | None = None, dpi: float = 100):
    """The standard solve figure from a solve result table.

    Left: the mechanism at the first point that assembled, with the effector path over the
    sweep. Right, against the first swept input (``x_name``): joint variables (or the effector
    position for serial arms whose other variables are all held), transmission angles with the
    40/140 deg guide lines (four-bar loops), velocity ratios (when the table has rates).
    A single point gives the drawing alone.

    ``table`` may be a TableStream (a streamed solve): the figure is drawn from the rows of
    :func:`solve_plot_rows` (M4 decimation over the sweep, every line's extremes kept; a table
    of at most ``4 * buckets`` rows is drawn whole)."""
    require_matplotlib()
    table = solve_plot_rows(mech, table, buckets=_buckets(dpi))
    q = q_from_table(mech, table)
    first = _first_valid(q)
    if first is None:
        raise AnalysisInputError("--plot: no point of the solve assembled; there is nothing to draw")
    path = effector_path(mech, q)
    size = reference_size(mech, q[np.all(np.isfinite(q), axis=1)])
    scene = build_scene(mech, q[first], size=size, q_range=q_range_of(q))
    xi = _x_variable(mech, q, x_name)
    inputs = [int(i) for i in mech.q_actuated]
    title = f"{mech.name}\nat {_values_text(mech, q[first], inputs)}" if inputs else mech.name
    if xi is None:
        return mechanism_figure(scene, labels=labels, view=view, title=title)

    panels = _solve_panels(mech, table, q, xi)
    w, h = _scene_figsize(scene, path)
    wide = scene.planar and h < 0.55 * w  # a flat mechanism: drawing on top, plots in a row below
    if wide:
        fig = new_figure((12.0, 0.5 + 12.0 * (h - 1.0) / 6.4 * 0.8 + 3.4))
        gs = fig.add_gridspec(2, len(panels), height_ratios=(h - 1.0, 3.4 * 6.4 / 12.0 / 0.8))
        ax = add_scene_axes(fig, scene, gs[0, :])
        cells = [gs[1, k] for k in range(len(panels))]
    else:
        fig = new_figure((12.0, max(5.0, 2.6 * len(panels))))
        gs = fig.add_gridspec(len(panels), 2, width_ratios=(1.25, 1.0))
        ax = add_scene_axes(fig, scene, gs[:, 0])
        cells = [gs[k, 1] for k in range(len(panels))]
    dots = len(swept_inputs(mech, q)) > 1  # a grid of inputs: points, not lines
    # decimated rows are not equally spaced: their steps tell nothing of a grid, the inputs do
    decimated = table.metadata.get("plot_rows", {}).get("kept") != table.metadata.get("plot_rows", {}).get("rows")
    draw_scene(ax, scene, labels=labels, path=path, path_dots=dots if decimated else None)
    set_limits(ax, scene, extra=path, view=view)
    ax.set_title(wrap_title(title), fontsize=10)
    ax.legend(loc="best", fontsize=8)
    x = np.asarray(table[_q_header(mech, xi)], float)
    xlabel = f"input {_q_header(mech, xi).replace('.q ', ' ')}"
    axes = []
    for k, (panel, cell) in enumerate(zip(panels, cells, strict=True)):
        pax = fig.add_subplot(cell, sharex=axes[0] if axes else None)
        panel(pax, x, dots)
        pax.grid(True, linewidth=0.4, alpha=0.5)
        if wide or k == len(panels) - 1:
            pax.set_xlabel(xlabel)
        else:
            pax.tick_params(labelbottom=False)
        axes.append(pax)
    return fig


def _line_style(dots: bool) -> dict:
    return dict(marker=".", linestyle="none", markersize=3) if dots else dict(linewidth=1.4)


def _solve_panels(mech: CompiledMechanism, table, q: np.ndarray, xi: int) -> list:
    swept = set(swept_inputs(mech, q))
    actuated = {int(i) for i in mech.q_actuated}
    shown = [i for i in range(mech.n_q) if i != xi and (i not in actuated or i in swept)]
    panels = []
    if shown:
        panels.append(lambda ax, x, dots: _plot_q(ax, mech, table, x, shown, dots))
    else:  # e.g. a serial arm with one joint moving: where the effector goes
        panels.append(lambda ax, x, dots: _plot_effector(ax, mech, table, x, dots))
    trans = [c for c in table.columns if c.quantity == "transmission"]
    if trans:
        panels.append(lambda ax, x, dots: _plot_transmission(ax, mech, table, x, trans, dots))
    rate_in = _q_header(mech, xi, "qd", "s")
    if rate_in in table:
        others = [i for i in range(mech.n_q) if i != xi and _q_header(mech, i, "qd", "s") in table
                  and i not in actuated]
        if others:
            panels.append(lambda ax, x, dots: _plot_ratios(ax, mech, table, x, xi, others, dots))
    return panels


def _plot_q(ax, mech, table, x, shown, dots) -> None:
    rot = [i for i in shown if mech.q_is_rotation[i]]
    lin = [i for i in shown if not mech.q_is_rotation[i]]
    handles = []
    main = ax
    if rot:
        for i in rot:
            handles += ax.plot(x, table[_q_header(mech, i)], label=mech.q_names[i], **_line_style(dots))
        ax.set_ylabel(f"joint angle [{mech.angle_unit}]")
    if lin:
        lax = ax.twinx() if rot else ax
        for k, i in enumerate(lin):
            handles += lax.plot(x, table[_q_header(mech, i)], label=f"{mech.q_names[i]} ({mech.length_unit})",
                                color=f"C{len(rot) + k}", linestyle="--" if not dots else "none",
                                marker="." if dots else None, markersize=3)
        lax.set_ylabel(f"joint displacement [{mech.length_unit}]")
    main.set_title("joint variables", fontsize=9)
    main.legend(handles=handles, fontsize=7, loc="best", ncol=2 if len(handles) > 4 else 1)


def _plot_effector(ax, mech, table, x, dots) -> None:
    for axis in ("x", "y", "z"):
        h = f"effector.{axis} [{mech.length_unit}]"
        if h in table:
            ax.plot(x, table[h], label=f"effector {axis}", **_line_style(dots))
    ax.set_ylabel(f"effector position [{mech.length_unit}]")
    ax.set_title(f"effector ({mech.frame_names[mech.effector_frame]}) position", fontsize=9)
    ax.legend(fontsize=7, loc="best")


def _plot_transmission(ax, mech, table, x, columns, dots) -> None:
    for c in columns:
        ax.plot(x, c.values, label=f"at joint {c.entity}", **_line_style(dots))
    scale = np.pi / 180.0 / mech.angle_scale  # deg -> file angle unit
    lo, hi = (v * scale for v in TRANSMISSION_LIMITS_DEG)
    ax.axhline(lo, color="0.3", linestyle="--", linewidth=0.9, label="40 / 140 deg guides")
    ax.axhline(hi, color="0.3", linestyle="--", linewidth=0.9)
    ax.axhspan(lo, hi, color="0.5", alpha=0.06)
    ax.set_ylabel(f"transmission angle [{mech.angle_unit}]")
    ax.set_title("transmission angle", fontsize=9)
    ax.legend(fontsize=7, loc="best")


def _plot_ratios(ax, mech, table, x, xi, others, dots) -> None:
    """Rate of each passive variable per unit input rate: same-kind ratios (angle per angle,
    length per length) on the left axis, mixed ones (e.g. m/deg) on a right axis."""
    rate_in = np.asarray(table[_q_header(mech, xi, "qd", "s")], float)
    unit_of = lambda i: mech.angle_unit if mech.q_is_rotation[i] else mech.length_unit  # noqa: E731
    same = [i for i in others if mech.q_is_rotation[i] == mech.q_is_rotation[xi]]
    mixed = [i for i in others if i not in same]
    handles = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, i in enumerate(same):
            ratio = np.asarray(table[_q_header(mech, i, "qd", "s")], float) / rate_in
            handles += ax.plot(x, ratio, label=mech.q_names[i], color=f"C{k}", **_line_style(dots))
        if mixed:
            rax = ax.twinx() if same else ax
            for k, i in enumerate(mixed):
                ratio = np.asarray(table[_q_header(mech, i, "qd", "s")], float) / rate_in
                style = _line_style(dots)
                if not dots:
                    style["linestyle"] = "--"
                handles += rax.plot(x, ratio, label=f"{mech.q_names[i]} [{unit_of(i)}/{unit_of(xi)}]",
                                    color=f"C{len(same) + k}", **style)
            rax.set_ylabel(f"[{unit_of(mixed[0])}/{unit_of(xi)}]")
    ax.axhline(0.0, color="0.3", linewidth=0.6)
    ax.set_ylabel(f"rate / {mech.q_names[xi]} rate" + (" [-]" if same else ""))
    ax.set_title("velocity ratios (joint rate per input rate)", fontsize=9)
    ax.legend(handles=handles, fontsize=7, loc="best", ncol=2 if len(others) > 4 else 1)


# --- chosen columns -----------------------------------------------------------------------------
def resolve_columns(table, names: Sequence[str], option: str = "--plot-columns") -> list[str]:
    """Headers of the columns named (``coupler.P.x`` or the full header ``coupler.P.x [m]``);
    AnalysisInputError with close matches for unknown or non-numeric columns."""
    headers = table.headers()
    bare = {h.split(" [")[0]: h for h in headers}
    out = []
    for name in names:
        h = name if name in headers else bare.get(name)
        if h is None:
            close = difflib.get_close_matches(name, list(bare), n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise AnalysisInputError(f"{option}: no column '{name}' in the result table.{hint} "
                                     "Columns are named as in the CSV header, without the unit "
                                     "(e.g. coupler.P.x, crank_pin.q).")
        if table.column(h).kind not in ("float", "int"):
            raise AnalysisInputError(f"{option}: column '{name}' is not numeric")
        out.append(h)
    return out


def columns_figure(table, columns: Sequence[str], *, x_header: str | None = None, title: str = ""):
    """Chosen table columns against ``x_header`` (the first swept input; the row number when
    None), one panel per unit so every y axis has one unit."""
    require_matplotlib()
    headers = resolve_columns(table, columns)
    units: dict[str, list[str]] = {}
    for h in headers:
        units.setdefault(table.column(h).unit, []).append(h)
    x = np.asarray(table[x_header], float) if x_header else np.arange(table.n, dtype=float)
    dots = bool(x_header) and len(x) > 2 and not (np.all(np.diff(x) >= 0) or np.all(np.diff(x) <= 0))
    fig = new_figure((7.5, 1.0 + 2.3 * len(units)))
    axes = fig.subplots(len(units), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (unit, hs) in zip(axes, units.items(), strict=True):
        for h in hs:
            ax.plot(x, table[h], label=h.split(" [")[0], **_line_style(dots))
        ax.set_ylabel(f"[{unit}]" if unit else "[-]")
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.legend(fontsize=8, loc="best")
    axes[-1].set_xlabel(x_header.replace(".q ", " ") if x_header else "row")
    if title:
        axes[0].set_title(title, fontsize=10)
    return fig


def solve_plot(mech: CompiledMechanism, table, path: str | os.PathLike, *, columns: Sequence[str] | None = None,
               x_name: str | None = None, dpi: float = 100) -> None:
    """``solve --plot``: the standard solve figure, or with ``columns`` a figure of those
    columns against the first swept input; written to ``path``. ``table``: a ResultTable or a
    TableStream (a streamed solve, read block by block): either way the figure is drawn from
    the rows of :func:`solve_plot_rows`, so memory is bounded whatever the sweep's length."""
    if columns:
        headers = resolve_columns(_first_block(table), columns)  # unknown names: a usage error first
        rows = solve_plot_rows(mech, table, columns=headers, buckets=_buckets(dpi))
        q = q_from_table(mech, rows)
        xi = _x_variable(mech, q, x_name)
        fig = columns_figure(rows, headers, x_header=_q_header(mech, xi) if xi is not None else None,
                             title=mech.name)
    else:
        fig = solve_figure(mech, table, x_name=x_name, dpi=dpi)
    save_figure(fig, path, dpi=dpi)


def _buckets(dpi: float) -> int:
    """Buckets of a decimated figure: at least one per pixel column of a 6-inch panel."""
    from .decimate import PLOT_BUCKETS

    return max(PLOT_BUCKETS, int(6 * dpi))


def _first_block(table):
    """A ResultTable with ``table``'s columns: the table itself, or a stream's first block."""
    if not isinstance(table, TableStream):
        return table
    first = next(iter(table.blocks()), None)
    if first is None:
        raise AnalysisInputError("--plot: the result table has no rows; there is nothing to draw")
    return first


def _solve_series(mech: CompiledMechanism, columns: Sequence[str] | None):
    """``block -> (rows, K)`` array of what a solve figure needs of every row (the keys of
    :func:`~linkcli.plot.decimate.decimate_rows`), row by row.

    Always the actuated variables as given (so which inputs vary, and the x axis, are those of
    the whole table). With ``columns`` (``--plot-columns``) those columns. Else the standard
    figure's lines and drawing: a flag 0 for rows that assembled (every joint variable finite)
    and 1 for the others (its minimum and maximum keep each bucket's first row that assembled
    and first that did not: the drawing is at the table's first assembled row, as without
    decimation), every joint variable, the actuated ones also NaN where the row did not
    assemble (their extremes over the assembled rows are the slider guides' range,
    :func:`~linkcli.plot.scene.q_range_of`), the effector position (the path on the drawing),
    the transmission angles and the joint rates (a velocity ratio is a joint rate over the
    input's rate, which is the same on every row: the rate's extremes are the ratio's)."""
    actuated = [int(i) for i in mech.q_actuated]

    def series(block) -> np.ndarray:
        q = q_from_table(mech, block)
        out = [q[:, i] for i in actuated]
        if columns:
            out += [np.asarray(block[h], float) for h in columns]
        else:
            valid = np.all(np.isfinite(q), axis=1)
            out.append(np.where(valid, 0.0, 1.0))
            out += [q[:, i] for i in range(mech.n_q) if i not in actuated]
            out += [np.where(valid, q[:, i], np.nan) for i in actuated]
            out += [np.asarray(c.values, float) for c in block.columns
                    if (c.entity == "effector" and c.quantity in ("x", "y", "z"))
                    or c.quantity in ("transmission", "qd")]
        return np.column_stack(out) if out else np.zeros((block.n, 0))

    return series


def solve_plot_rows(mech: CompiledMechanism, table, *, columns: Sequence[str] | None = None,
                    buckets: int | None = None):
    """The rows of a solve result table (a ResultTable, or a TableStream read block by block)
    a solve figure draws: M4-decimated (:mod:`linkcli.plot.decimate`, the algorithm of the
    simulation figure) to about ``buckets`` buckets of consecutive rows (default
    :data:`~linkcli.plot.decimate.PLOT_BUCKETS`; a sweep's rows are equally spaced in its
    input, a grid's in its first input), every plotted line's extremes in each bucket kept
    (:func:`_solve_series` says which), all columns of the kept rows. A table of at most
    ``4 * buckets`` rows is returned whole: its figure is the one of every row.

    A grid of inputs (several inputs vary) is drawn as dots, whose picture is every dot, not
    each bucket's extremes: a grid of at most :data:`GRID_WHOLE_ROWS` rows is returned whole
    (read a second time), a longer one decimated like a sweep (each series' range over every
    run of consecutive rows is kept, the dots inside it are not).

    What the decimated figure draws from the kept rows instead of every row: the symbol sizes
    (the extent of the link points over the kept configurations: within a bucket's motion of
    the whole sweep's) and the coupler path and lines between the kept rows (M4: at one bucket
    per pixel column, the picture of every row)."""
    from .decimate import PLOT_BUCKETS, decimate_rows

    keys = _solve_series(mech, columns)
    rows = decimate_rows(table, keys, buckets or PLOT_BUCKETS)
    if rows.n < table.n <= GRID_WHOLE_ROWS and len(swept_inputs(mech, q_from_table(mech, rows))) > 1:
        # (the kept rows hold every input's extremes: they tell a grid as every row does)
        rows = decimate_rows(table, keys, -(-table.n // 4))  # at most 4 rows per bucket: every row
    return rows


#: rows of a grid of inputs drawn whole (dots) by a solve figure: ~30 MB of a planar five-bar's
#: table (30 columns), a 316 x 316 grid
GRID_WHOLE_ROWS = 100_000


# --- simulate -----------------------------------------------------------------------------------
def _entities(table) -> dict[str, dict[str, str]]:
    """entity -> {quantity: header} for every numeric column."""
    out: dict[str, dict[str, str]] = {}
    for c in table.columns:
        if c.kind in ("float", "int"):
            out.setdefault(c.entity, {})[c.quantity] = c.header
    return out


def _simulation_layout(table, drivers: Sequence[str] | None):
    """What the simulation figure plots, from column names: (joint variable columns, driver
    load columns, reaction force columns per joint, energy columns by quantity)."""
    ent = _entities(table)
    q_cols = [(e, cols["q"]) for e, cols in ent.items() if "q" in cols]
    if drivers is None:
        drivers = [e for e, cols in ent.items() if e and set(cols) <= {"torque", "force"} and cols]
    drv = [(e, h) for e in drivers for qn, h in ent.get(e, {}).items() if qn in ("torque", "force")]
    reac = {e: [cols[k] for k in ("Fx", "Fy", "Fz") if k in cols] for e, cols in ent.items() if "Fx" in cols}
    return q_cols, drv, reac, ent.get("energy", {})


def _simulation_series(drivers: Sequence[str] | None):
    """``block -> (rows, K)`` array of every line the simulation figure draws, row by row (the
    keys of :func:`~linkcli.plot.decimate.decimate_rows`): joint variables, driver loads,
    reaction magnitudes, energies, the summed work (the budget line up to its constant
    ``total(0)``) and total minus work (the balance error up to the same constant)."""

    def series(block) -> np.ndarray:
        q_cols, drv, reac, energy = _simulation_layout(block, drivers)
        out = [np.asarray(block[h], float) for _, h in [*q_cols, *drv]]
        out += [np.sqrt(sum(np.asarray(block[h], float) ** 2 for h in hs)) for hs in reac.values()]
        out += [np.asarray(block[energy[k]], float) for k in ("kinetic", "potential", "total") if k in energy]
        work = [np.asarray(block[energy[k]], float) for k in energy if k.startswith("work_")]
        if work:
            out.append(sum(work))
            if "total" in energy:
                out.append(np.asarray(block[energy["total"]], float) - sum(work))
        return np.column_stack(out) if out else np.zeros((block.n, 0))

    return series


def simulation_plot_rows(table, drivers: Sequence[str] | None = None, buckets: int | None = None):
    """The rows of a simulate result table (a ResultTable, or a TableStream read block by block)
    the simulation figure draws: M4-decimated (:mod:`linkcli.plot.decimate`) to about
    ``buckets`` time buckets (default :data:`~linkcli.plot.decimate.PLOT_BUCKETS`), every line's
    extremes in each bucket kept, only the plotted columns; memory bounded whatever the run's
    length."""
    from .decimate import PLOT_BUCKETS, decimate_rows

    first = next(iter(table.blocks()), None) if isinstance(table, TableStream) else table
    if first is None or "t [s]" not in first:
        raise AnalysisInputError("simulation figure: the table has no 't [s]' column")
    q_cols, drv, reac, energy = _simulation_layout(first, drivers)
    columns = list(dict.fromkeys(["t [s]", *(h for _, h in [*q_cols, *drv]), *(h for hs in reac.values() for h in hs),
                                  *energy.values()]))
    return decimate_rows(table, _simulation_series(drivers), buckets or PLOT_BUCKETS, columns)


def simulation_figure(table, path: str | os.PathLike | None = None, *, dpi: float = 100,
                      drivers: Sequence[str] | None = None):
    """The simulation figure from a simulate result table, found by column names:

    * joint variables ``J.q`` against ``t [s]`` (angles left axis, lengths right axis);
    * driver loads: ``D.torque``/``D.force`` columns of entities that have nothing else (spring
      and damper entities also carry angle/length and rate columns), or the ``drivers`` given;
    * joint reactions: the magnitude of ``J.Fx, J.Fy (, J.Fz)`` per joint;
    * energy: ``energy.kinetic``, ``potential``, ``total`` and ``total(0) + work`` (the sum of
      the ``energy.work_*`` columns): the last two coincide when energy is balanced.

    ``table`` may be a TableStream (a streamed run): the lines are drawn through the rows of
    :func:`simulation_plot_rows` (M4 decimation: every line's true extremes in each of at
    least ``6 * dpi`` time buckets, so peaks are never lost; a long run's figure holds a few
    thousand rows, not all of them). Panels without columns are left out. Written to ``path``
    when given; returns the Figure."""
    from .decimate import PLOT_BUCKETS

    require_matplotlib()
    table = simulation_plot_rows(table, drivers, max(PLOT_BUCKETS, int(6 * dpi)))
    t = np.asarray(table["t [s]"], float)
    q_cols, drv, reac, energy = _simulation_layout(table, drivers)
    panels = []
    if q_cols:
        panels.append(lambda ax: _sim_q(ax, table, t, q_cols))
    if drv:
        panels.append(lambda ax: _sim_drivers(ax, table, t, drv))
    if reac:
        panels.append(lambda ax: _sim_reactions(ax, table, t, reac))
    if {"kinetic", "potential", "total"} <= set(energy):
        panels.append(lambda ax: _sim_energy(ax, table, t, energy))
    if not panels:
        raise AnalysisInputError("simulation figure: the table has none of the columns it plots "
                                 "(J.q, driver torque/force, J.Fx, energy.*)")
    ncol = 2 if len(panels) > 2 else 1
    nrow = -(-len(panels) // ncol)
    fig = new_figure((6.0 * ncol, 1.2 + 2.8 * nrow))
    axes = fig.subplots(nrow, ncol, sharex=True, squeeze=False).ravel()
    for ax, panel in zip(axes, panels, strict=False):  # strict=False: the grid may have one spare cell
        panel(ax)
        ax.grid(True, linewidth=0.4, alpha=0.5)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    for ax in axes[-ncol:]:
        ax.set_xlabel("t [s]")
        ax.tick_params(labelbottom=True)
    name = table.metadata.get("mechanism") or ""
    if name:
        fig.suptitle(f"{name}: simulation", fontsize=10)
    if path is not None:
        save_figure(fig, path, dpi=dpi)
    return fig


def _sim_q(ax, table, t, q_cols) -> None:
    units = {}
    for e, h in q_cols:
        units.setdefault(table.column(h).unit, []).append((e, h))
    groups = list(units.items())
    handles = []
    for k, (unit, cols) in enumerate(groups[:2]):
        a = ax if k == 0 else ax.twinx()
        for e, h in cols:
            handles += a.plot(t, table[h], label=e if k == 0 else f"{e} ({unit})", linestyle="-" if k == 0 else "--",
                              color=f"C{len(handles) % 10}", linewidth=1.3)
        a.set_ylabel(f"joint {'variable' if k else 'angle' if unit in ('deg', 'rad') else 'variable'} [{unit}]")
    ax.set_title("joint variables", fontsize=9)
    ax.legend(handles=handles, fontsize=7, loc="best", ncol=2 if len(handles) > 4 else 1)


def _sim_drivers(ax, table, t, drv) -> None:
    units = sorted({table.column(h).unit for _, h in drv})
    for e, h in drv:
        ax.plot(t, table[h], label=f"{e} {table.column(h).quantity}", linewidth=1.3)
    ax.axhline(0.0, color="0.3", linewidth=0.6)
    ax.set_ylabel(f"driver load [{', '.join(units)}]")
    ax.set_title("driver torque / force", fontsize=9)
    ax.legend(fontsize=7, loc="best")


def _sim_reactions(ax, table, t, reac) -> None:
    for e, hs in reac.items():
        mag = np.sqrt(sum(np.asarray(table[h], float) ** 2 for h in hs))
        ax.plot(t, mag, label=f"joint {e}", linewidth=1.3)
    ax.set_ylabel("|reaction force| [N]")
    ax.set_title("joint reaction forces (on the child link)", fontsize=9)
    ax.legend(fontsize=7, loc="best", ncol=2 if len(reac) > 4 else 1)


def _sim_energy(ax, table, t, energy) -> None:
    for k in ("kinetic", "potential", "total"):
        ax.plot(t, table[energy[k]], label=k, linewidth=1.3)
    work = [energy[k] for k in energy if k.startswith("work_")]
    if work:
        total = np.asarray(table[energy["total"]], float)
        budget = total[0] + sum(np.asarray(table[h], float) for h in work)
        err = np.nanmax(np.abs(total - budget)) if len(total) else 0.0
        ax.plot(t, budget, label=f"initial + work (max diff {err:.2g} J)", linestyle=":", color="k", linewidth=1.5)
    ax.set_ylabel("energy [J]")
    ax.set_title("energy balance", fontsize=9)
    ax.legend(fontsize=7, loc="best")


__all__ = ["FIGURE_FORMATS", "check_figure_path", "save_figure", "mechanism_figure", "solve_figure",
           "columns_figure", "resolve_columns", "solve_plot", "solve_plot_rows", "simulation_figure",
           "simulation_plot_rows", "PlotUnavailableError"]
