"""Pictures (linkcli.plot and the draw/animate commands, solve/simulate --plot).

The drawings are checked on their DATA: the coordinates of the artists on the axes (bars,
polygons, joint circles, ground marks, the effector path, plotted columns) are compared with
positions computed here independently from the compiled mechanism (``link_poses``/``frame_poses``
at the assembled q) or with the result table's columns, not only that a file appears.

Scene tests (pure numpy) always run; tests that render need matplotlib (the ``plot`` extra, also
in the ``test`` extra) and skip cleanly without it. Rendering uses the Agg backend.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from linkcli.cli.common import ExitCode, load_and_compile
from linkcli.core.assembly import assemble
from linkcli.core.forward import effector_pose, frame_poses, link_poses
from linkcli.core.loop_closure import Status
from linkcli.core.mechanism import REVOLUTE
from linkcli.plot import INSTALL_HINT, PlotUnavailableError, require_matplotlib
from linkcli.plot.scene import build_scene, frame_indices, link_outline, q_from_table

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "mechanisms").glob("*.yaml"))
TOL = 1e-9  # positions: the scene and these checks evaluate the same closed-form kinematics


@pytest.fixture
def mpl():
    """matplotlib with the Agg backend, or skip (the `plot` extra is not installed)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    return matplotlib


# -- independent geometry ------------------------------------------------------------------------
def assembled(path, set_deg: dict | None = None):
    """(mech, q) at the file's estimate (actuated values overridden by ``set_deg`` in file units)."""
    _, mech = load_and_compile(path)
    a = np.array(mech.q_init[mech.q_actuated], float)
    for name, v in (set_deg or {}).items():
        k = [mech.q_names[i] for i in mech.q_actuated].index(name)
        rot = mech.q_is_rotation[mech.q_actuated[k]]
        a[k] = v * (mech.angle_scale if rot else mech.length_scale)
    res = assemble(mech, a, mech.q_init)
    assert res.status == Status.CONVERGED
    return mech, res.q


def expected(mech, q):
    """Positions in file units: frames (n_frames, 3); joint frame origins on parent and child
    (n_joints, 3); effector (3,); and the points of each link {link index: (k, 3)}."""
    s = mech.length_scale
    T = link_poses(mech, q)
    frames = frame_poses(mech, T)[:, :3, 3] / s
    jp = np.array([(T[mech.joint_parent[j]] @ mech.T_parent_joint[j])[:3, 3] for j in range(mech.n_joints)]) / s
    jc = np.array([(T[mech.joint_child[j]] @ mech.T_child_joint[j])[:3, 3] for j in range(mech.n_joints)]) / s
    per_link = {}
    for i in range(mech.n_links):
        pts = [frames[f] for f in range(mech.n_frames) if mech.frame_link[f] == i]
        pts += [jp[j] for j in range(mech.n_joints) if mech.joint_parent[j] == i]
        pts += [jc[j] for j in range(mech.n_joints) if mech.joint_child[j] == i]
        per_link[i] = np.array(pts).reshape(-1, 3)
    return frames, jp, jc, effector_pose(mech, T)[:3, 3] / s, per_link


def by_gid(ax) -> dict:
    out = {}
    for a in ax.get_children():
        gid = a.get_gid() if hasattr(a, "get_gid") else None
        if gid:
            out[gid] = a
    return out


def artist_xyz(artist, planar: bool) -> np.ndarray:
    """(k, 3) coordinates of a Line2D/Line3D/Polygon/Circle (z = 0 for 2-D artists)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, Polygon

    if hasattr(artist, "linkcli_xyz"):  # 3-D polygons (Poly3DCollection has no public getter)
        return np.asarray(artist.linkcli_xyz, float)
    if hasattr(artist, "get_data_3d"):
        return np.column_stack(artist.get_data_3d()).astype(float)
    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), float)
    elif isinstance(artist, Circle):
        xy = np.asarray(artist.center, float)[None]
    elif isinstance(artist, Polygon):
        xy = np.asarray(artist.get_xy(), float)
        if len(xy) > 1 and np.allclose(xy[0], xy[-1]):
            xy = xy[:-1]  # closed polygons repeat the first vertex
    else:  # pragma: no cover
        raise TypeError(type(artist))
    return np.column_stack([xy, np.zeros(len(xy))])


def on_segment(p, a, b, tol) -> bool:
    d = b - a
    t = np.clip((p - a) @ d / (d @ d), 0.0, 1.0)
    return bool(np.linalg.norm(a + t * d - p) <= tol)


def is_member(p, pts, tol) -> bool:
    return bool(np.any(np.linalg.norm(pts - p, axis=1) <= tol))


def check_drawing(ax, mech, q) -> None:
    """Every artist of the mechanism is where the kinematics puts it."""
    from matplotlib.path import Path as MplPath

    frames, jp, jc, eff, per_link = expected(mech, q)
    size = max(np.ptp(np.concatenate(list(per_link.values())), axis=0).max(), 1e-9)
    tol = TOL * max(1.0, size)
    art = by_gid(ax)
    planar = bool(mech.planar)
    for i in range(1, mech.n_links):
        name = mech.link_names[i]
        pts = per_link[i]
        distinct = [p for k, p in enumerate(pts) if not is_member(p, pts[:k], tol)]
        if len(distinct) < 2:
            continue  # a point link (a slider block, a wrist): checked with its joints
        xyz = artist_xyz(art[f"link:{name}"], planar)
        for v in xyz:  # the artist's vertices are points of this link ...
            assert is_member(v, pts, tol), f"{name}: vertex {v} is not a point of the link"
        for p in pts:  # ... and every point of the link is on the bar / in the polygon
            if len(xyz) == 2:
                assert on_segment(p, xyz[0], xyz[1], tol), f"{name}: point {p} is off the bar"
            else:
                path = MplPath(xyz[:, :2])
                assert is_member(p, xyz, tol) or path.contains_point(p[:2], radius=tol) or \
                    path.contains_point(p[:2], radius=-tol), f"{name}: point {p} is outside the polygon"
    for j in range(mech.n_joints):
        gid = f"joint:{mech.joint_names[j]}"
        if mech.joint_type[j] == REVOLUTE:
            centre = artist_xyz(art[gid], planar)[0]
            np.testing.assert_allclose(centre, jp[j], atol=tol)
            np.testing.assert_allclose(centre, jc[j], atol=1e-6 * max(1.0, size))  # assembled
        elif f"slider:{mech.joint_names[j]}" in art:
            block = artist_xyz(art[f"slider:{mech.joint_names[j]}"], planar)
            np.testing.assert_allclose(block.mean(axis=0), jc[j], atol=tol)  # block centred on the child
            guide = artist_xyz(art[f"guide:{mech.joint_names[j]}"], planar)
            assert on_segment(jc[j], guide[0], guide[1], tol), "the block is not on its guide line"
    grounds = [art[g] for g in art if g.startswith("ground:")]
    apexes = [artist_xyz(g, planar)[0] for g in grounds]
    base_points = [jp[j] if mech.joint_parent[j] == 0 else jc[j] for j in range(mech.n_joints)
                   if 0 in (mech.joint_parent[j], mech.joint_child[j]) and mech.joint_type[j] == REVOLUTE]
    for p in base_points:
        assert any(np.allclose(a, p, atol=tol) for a in apexes), f"no ground mark at base point {p}"
    np.testing.assert_allclose(artist_xyz(art["effector"], planar)[0], eff, atol=tol)


# -- scene (numpy only) -----------------------------------------------------------------------------
def test_scene_module_does_not_use_matplotlib():
    tree = ast.parse((REPO / "linkcli" / "plot" / "scene.py").read_text(encoding="utf-8"))
    mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m.split(".")[0] == "matplotlib" for m in mods)
    code = "import sys, linkcli.plot, linkcli.plot.scene; print('matplotlib' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_scene_of_the_fourbar_matches_the_kinematics():
    mech, q = assembled(REPO / "mechanisms" / "fourbar.yaml", {"crank_pin": 30})
    scene = build_scene(mech, q)
    frames, jp, jc, eff, per_link = expected(mech, q)
    links = {s.name: s for s in scene.links}
    assert links["crank"].kind == "bar" and links["rocker"].kind == "bar"
    assert links["coupler"].kind == "polygon"  # A, B and P: a filled triangle
    np.testing.assert_allclose(links["crank"].outline[:, :2], [[0, 0], [np.cos(np.pi / 6), np.sin(np.pi / 6)]],
                               atol=1e-12)
    np.testing.assert_allclose(sorted(map(tuple, links["coupler"].outline)), sorted(map(tuple, per_link[2][:3])),
                               atol=1e-12)
    joints = {j.name: j for j in scene.joints}
    for j, name in enumerate(mech.joint_names):
        np.testing.assert_allclose(joints[name].position, jp[j], atol=1e-12)
        np.testing.assert_allclose(joints[name].axis, [0, 0, 1], atol=1e-12)
    assert [j.ground for j in scene.joints] == [True, False, False, True]
    np.testing.assert_allclose(sorted(g.position[0] for g in scene.grounds), [0.0, 4.0], atol=1e-12)
    for g in scene.grounds:  # gravity is -y: triangles and strips below their point
        assert np.all(g.triangle[1:, 1] < g.position[1]) and np.all(g.strip[:, 1] < g.position[1])
    np.testing.assert_allclose(scene.effector, eff, atol=1e-12)
    assert scene.unit == "m" and scene.effector_name == "coupler.P"


def test_scene_coordinates_are_in_the_file_length_unit(fourbar_text, write_mech):
    path = write_mech(fourbar_text.replace("units: {length: m, angle: deg}", "units: {length: mm, angle: deg}"))
    mech, q = assembled(path)
    scene = build_scene(mech, q)
    assert scene.unit == "mm" and mech.length_scale == 1e-3
    ground = sorted(tuple(np.round(g.position, 9)) for g in scene.grounds)
    assert ground == [(0.0, 0.0, 0.0), (4.0, 0.0, 0.0)]  # the file's numbers, not metres
    mech_m, q_m = assembled(REPO / "mechanisms" / "fourbar.yaml")
    scene_m = build_scene(mech_m, q_m)  # the same numbers in metres: the same picture
    np.testing.assert_allclose(scene.all_points(), scene_m.all_points(), atol=1e-9)
    np.testing.assert_allclose(scene.effector, scene_m.effector, atol=1e-9)
    assert scene.size == pytest.approx(scene_m.size)


def test_drawing_in_millimetres(mpl, run_cli, fourbar_text, write_mech, tmp_path, captured_figures):
    path = write_mech(fourbar_text.replace("units: {length: m, angle: deg}", "units: {length: mm, angle: deg}"))
    r = run_cli("draw", path, "-o", tmp_path / "mm.png")
    assert r.exit_code == 0, r.output
    mech, q = assembled(path)
    ax = captured_figures[0].axes[0]
    check_drawing(ax, mech, q)
    assert ax.get_xlabel() == "x [mm]"


def test_slider_block_on_its_guide():
    mech, q = assembled(REPO / "mechanisms" / "slider_crank.yaml", {"crank_pin": 45})
    scene = build_scene(mech, q)
    (s,) = scene.sliders
    B = frame_poses(mech, link_poses(mech, q))[mech.frame_index("slider.B"), :3, 3]
    np.testing.assert_allclose(s.centre, B, atol=1e-12)
    np.testing.assert_allclose(s.block.mean(axis=0), B, atol=1e-12)
    np.testing.assert_allclose(s.axis, [1, 0, 0], atol=1e-12)
    assert s.guide[0, 0] < B[0] < s.guide[1, 0] and np.allclose(s.guide[:, 1], 0.5)
    assert s.ground and s.strip is not None and np.all(s.strip[:, 1] < s.block[:, 1].min() + 1e-12)
    # over a sweep the guide covers the whole stroke
    q2 = q.copy()
    q_range = np.stack([q, q])
    k = mech.q_names.index("slide")
    q_range[0, k], q_range[1, k] = 2.5, 4.5
    s2 = build_scene(mech, q2, q_range=q_range).sliders[0]
    assert s2.guide[0, 0] < 2.5 and s2.guide[1, 0] > 4.5


def test_link_outline_hull_and_bars():
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0], [0.2, 0.7, 0]], float)
    outline, kind = link_outline(square, 1e-9)
    assert kind == "polygon" and len(outline) == 4
    assert {tuple(p) for p in outline} == {tuple(p) for p in square[:4]}
    line = np.array([[0, 0, 0], [2, 2, 2], [1, 1, 1]], float)
    outline, kind = link_outline(line, 1e-9)
    assert kind == "bar" and {tuple(p) for p in outline} == {(0, 0, 0), (2, 2, 2)}
    tilted = np.array([[0, 0, 0], [1, 0, 1], [0, 1, 0]], float)  # a triangle in a tilted plane
    outline, kind = link_outline(tilted, 1e-9)
    assert kind == "polygon" and len(outline) == 3


def test_frame_indices():
    assert list(frame_indices(5, None)) == [0, 1, 2, 3, 4]
    idx = frame_indices(361, 37)
    assert len(idx) == 37 and idx[0] == 0 and idx[-1] == 360 and np.all(np.diff(idx) > 0)
    assert list(frame_indices(3, 10)) == [0, 1, 2]
    assert list(frame_indices(0, 10)) == []


def test_missing_matplotlib_is_a_clear_usage_error(run_cli, fourbar_path, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    with pytest.raises(PlotUnavailableError, match="linkcli\\[plot\\]"):
        require_matplotlib()
    for args in (["draw", fourbar_path, "-o", tmp_path / "x.png"],
                 ["solve", fourbar_path, "--plot", tmp_path / "x.png", "-q"],
                 ["animate", fourbar_path, "-o", tmp_path / "x.gif"]):
        r = run_cli(*args)
        assert r.exit_code == ExitCode.USAGE, r.output
        assert INSTALL_HINT in r.stderr and "Traceback" not in r.output
        assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("command", ["draw", "animate", "solve"])
def test_command_help_does_not_import_matplotlib(command):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("LINKCLI_TRACEBACK", None)
    code = ("import sys; from linkcli.cli.app import main\n"
            f"try:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n"
            "    pass\nprint('MPL', 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "MPL False" in out.stdout


# -- draw -----------------------------------------------------------------------------------------
@pytest.fixture
def captured_figures(monkeypatch):
    """Figures passed to save_figure (the file is still written)."""
    from linkcli.plot import figures

    saved = []
    real = figures.save_figure

    def spy(fig, path, dpi=100):
        saved.append(fig)
        real(fig, path, dpi=dpi)

    monkeypatch.setattr(figures, "save_figure", spy)
    return saved


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_draws_where_the_kinematics_puts_it(mpl, run_cli, tmp_path, captured_figures, path):
    out = tmp_path / f"{path.stem}.png"
    r = run_cli("draw", path, "-o", out, "--labels")
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (fig,) = captured_figures
    mech, q = assembled(path)
    (ax,) = fig.axes
    check_drawing(ax, mech, q)
    unit = mech.length_unit
    assert ax.get_xlabel() == f"x [{unit}]" and ax.get_ylabel() == f"y [{unit}]"
    if mech.planar:
        assert ax.get_aspect() == 1.0  # equal axes
        assert ax.name == "rectilinear"
    else:
        assert ax.name == "3d" and ax.get_zlabel() == f"z [{unit}]"
        lo_hi = np.array([ax.get_xlim(), ax.get_ylim(), ax.get_zlim()])
        np.testing.assert_allclose(np.ptp(lo_hi, axis=1), np.ptp(lo_hi, axis=1)[0])  # a cube: equal axes
    labels = {t.get_text() for t in ax.texts}
    assert set(mech.joint_names) <= labels and set(mech.link_names[1:]) <= labels


def test_draw_set_moves_the_crank(mpl, run_cli, fourbar_path, tmp_path, captured_figures):
    r = run_cli("draw", fourbar_path, "--set", "crank_pin=30", "-o", tmp_path / "f.svg")
    assert r.exit_code == 0, r.output
    assert b"<svg" in (tmp_path / "f.svg").read_bytes()[:400]
    art = by_gid(captured_figures[0].axes[0])
    np.testing.assert_allclose(art["joint:A"].center, [np.cos(np.pi / 6), np.sin(np.pi / 6)], atol=1e-12)
    mech, q = assembled(fourbar_path, {"crank_pin": 30})
    check_drawing(captured_figures[0].axes[0], mech, q)


def test_draw_keeps_the_assembly_mode_far_from_the_estimate(mpl, run_cli, fourbar_path, tmp_path, captured_figures):
    # the estimate is the open mode (B above the ground line); at crank 200 deg it must stay open
    r = run_cli("draw", fourbar_path, "--set", "crank_pin=200", "-o", tmp_path / "f.png")
    assert r.exit_code == 0, r.output
    art = by_gid(captured_figures[0].axes[0])
    assert art["joint:B"].center[1] > 0


def test_draw_view_of_a_spatial_mechanism(mpl, run_cli, tmp_path, captured_figures):
    r = run_cli("draw", REPO / "mechanisms" / "rssr_spatial.yaml", "--view", "30,-45", "-o", tmp_path / "r.png")
    assert r.exit_code == 0, r.output
    ax = captured_figures[0].axes[0]
    assert (ax.elev, ax.azim) == (30.0, -45.0)


def test_draw_cannot_assemble_exits_1(mpl, run_cli, fourbar_text, write_mech, tmp_path):
    # coupler 1 instead of 3.5: at crank 180 deg A is 5 from O4 but coupler + rocker reach only 4
    path = write_mech(fourbar_text.replace("B: [3.5, 0], P: [1.75, 0.6]", "B: [1.0, 0], P: [0.5, 0.3]")
                      .replace("between: [A, B], mass: 3.5", "between: [A, B], mass: 1.0"))
    out = tmp_path / "x.png"
    r = run_cli("draw", path, "--set", "crank_pin=180", "-o", out)
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output
    assert "cannot assemble at crank_pin = 180 deg" in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("args,needle", [
    (["-o", "x.txt"], ".png"),
    (["-o", "x.png", "--view", "30"], "ELEV,AZIM"),
    (["-o", "x.png", "--set", "crank=30"], "crank_pin"),
])
def test_draw_usage_errors_exit_2(mpl, run_cli, fourbar_path, tmp_path, args, needle):
    args = [str(tmp_path / a) if a.startswith("x.") else a for a in args]
    r = run_cli("draw", fourbar_path, *args)
    assert r.exit_code == ExitCode.USAGE, r.output
    assert needle in r.stderr


# -- solve --plot --------------------------------------------------------------------------------
def solve_table(path, *args):
    from linkcli.analyses.solve import run_solve
    from linkcli.cli.commands.solve import build_request

    loaded, mech = load_and_compile(path)
    req = build_request(loaded.model, set_=None, sweep=list(args) or None, zip_=False, rate=None, acceleration=None,
                        output_frames=None)
    return mech, run_solve(mech, req, loaded).table


def test_solve_plot_draws_the_coupler_curve_on_the_mechanism(mpl, run_cli, fourbar_path, tmp_path, captured_figures):
    out = tmp_path / "coupler.png"
    r = run_cli("solve", fourbar_path, "--plot", out, "-o", tmp_path / "t.csv")
    assert r.exit_code == 0, r.output
    assert out.stat().st_size > 0 and f"wrote {out}" in r.stderr
    (fig,) = captured_figures
    mech, table = solve_table(fourbar_path)
    scene_ax = next(ax for ax in fig.axes if "path:coupler.P" in by_gid(ax))
    art = by_gid(scene_ax)
    # the effector path is the table's effector columns
    np.testing.assert_allclose(art["path:coupler.P"].get_xdata(), table["effector.x [m]"], atol=1e-12)
    np.testing.assert_allclose(art["path:coupler.P"].get_ydata(), table["effector.y [m]"], atol=1e-12)
    # the mechanism is drawn at the first point of the sweep (crank 0 deg)
    crank = artist_xyz(art["link:crank"], True)
    np.testing.assert_allclose(crank[:, :2], [[table["crank.O2.x [m]"][0], table["crank.O2.y [m]"][0]],
                                              [table["crank.A.x [m]"][0], table["crank.A.y [m]"][0]]], atol=1e-12)
    check_drawing(scene_ax, mech, q_from_table(mech, table)[0])
    assert scene_ax.get_legend() is not None
    # joint variables and transmission angle against the swept input
    x = table["crank_pin.q [deg]"]
    lines = {ln.get_label(): ln for ax in fig.axes if ax is not scene_ax for ln in ax.get_lines()}
    for name in ("A", "B", "O4"):
        np.testing.assert_allclose(lines[name].get_xdata(), x)
        np.testing.assert_allclose(lines[name].get_ydata(), table[f"{name}.q [deg]"])
    np.testing.assert_allclose(lines["at joint B"].get_ydata(), table["B.transmission [deg]"])
    trans_ax = next(ax for ax in fig.axes if "at joint B" in [ln.get_label() for ln in ax.get_lines()])
    guides = sorted(ln.get_ydata()[0] for ln in trans_ax.get_lines() if len(set(ln.get_ydata())) == 1)
    assert guides == [40.0, 140.0]
    assert any("crank_pin [deg]" in ax.get_xlabel() for ax in fig.axes)


def test_solve_plot_velocity_ratios(mpl, run_cli, tmp_path, captured_figures):
    path = REPO / "mechanisms" / "slider_crank.yaml"
    r = run_cli("solve", path, "--rate", "crank_pin=360", "--plot", tmp_path / "r.png", "-q", "-f", "csv")
    assert r.exit_code == 0, r.output
    from linkcli.analyses.inputs import Sweep
    from linkcli.analyses.solve import SolveRequest, run_solve

    loaded, mech = load_and_compile(path)
    table = run_solve(mech, SolveRequest(sweeps=[Sweep("crank_pin", 0, 360, 2)], rates={"crank_pin": 360}),
                      loaded).table
    ratio_ax = next(ax for ax in captured_figures[0].axes if "velocity ratios" in ax.get_title())
    fig_lines = [ln for ax in captured_figures[0].axes for ln in ax.get_lines()]
    (a_line,) = [ln for ln in ratio_ax.get_lines() if ln.get_label() == "A"]
    np.testing.assert_allclose(a_line.get_ydata(), table["A.qd [deg/s]"] / table["crank_pin.qd [deg/s]"])
    (slide,) = [ln for ln in fig_lines if ln.get_label() == "slide [m/deg]"]  # on the right-hand axis
    np.testing.assert_allclose(slide.get_ydata(), table["slide.qd [m/s]"] / 360.0)


def test_solve_plot_columns(mpl, run_cli, fourbar_path, tmp_path, captured_figures):
    r = run_cli("solve", fourbar_path, "--sweep", "crank_pin=0:90:10", "--plot", tmp_path / "c.pdf",
               "--plot-columns", "coupler.P.x,coupler.P.y [m],B.transmission", "-q", "-f", "csv")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c.pdf").read_bytes()[:4] == b"%PDF"
    mech, table = solve_table(fourbar_path, "crank_pin=0:90:10")
    fig = captured_figures[0]
    assert len(fig.axes) == 2  # one panel per unit: m and deg
    lines = {ln.get_label(): ln for ax in fig.axes for ln in ax.get_lines()}
    for name, header in (("coupler.P.x", "coupler.P.x [m]"), ("coupler.P.y", "coupler.P.y [m]"),
                         ("B.transmission", "B.transmission [deg]")):
        np.testing.assert_allclose(lines[name].get_xdata(), table["crank_pin.q [deg]"])
        np.testing.assert_allclose(lines[name].get_ydata(), table[header])


def test_solve_plot_usage_errors(mpl, run_cli, fourbar_path, tmp_path):
    r = run_cli("solve", fourbar_path, "--plot", tmp_path / "x.jpeg", "-q")
    assert r.exit_code == ExitCode.USAGE and ".png" in r.stderr and r.stdout == ""  # before solving
    r = run_cli("solve", fourbar_path, "--plot-columns", "coupler.P.x", "-q")
    assert r.exit_code == ExitCode.USAGE and "--plot FILE" in r.stderr
    r = run_cli("solve", fourbar_path, "--plot", tmp_path / "x.png", "--plot-columns", "coupler.P.xx",
               "-q", "-f", "csv")
    assert r.exit_code == ExitCode.USAGE and "coupler.P.x" in r.stderr  # did you mean


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_solve_plot(mpl, path):
    from linkcli.plot.figures import solve_figure

    mech, table = solve_table(path)
    fig = solve_figure(mech, table)
    scene_ax = fig.axes[0]
    q = q_from_table(mech, table)
    first = int(np.flatnonzero(np.all(np.isfinite(q), axis=1))[0])
    check_drawing(scene_ax, mech, q[first])


# -- simulate --plot -----------------------------------------------------------------------------
def synthetic_simulation_table():
    from linkcli.results import ResultTable

    t = np.linspace(0.0, 1.0, 11)
    table = ResultTable(n=len(t), metadata={"mechanism": "test"})
    table.add("", "t", "s", t)
    table.add("crank_pin", "q", "deg", 360 * t)
    table.add("slide", "q", "m", 1 + t)
    table.add("spring", "angle", "deg", t)
    table.add("spring", "torque", "N m", -t)  # a spring, not a driver: it has an angle column
    table.add("motor", "torque", "N m", np.sin(t))
    for j in ("crank_pin", "A"):
        table.add(j, "Fx", "N", 3 * t)
        table.add(j, "Fy", "N", 4 * t)
        table.add(j, "Mz", "N m", t)
    table.add("energy", "kinetic", "J", t**2)
    table.add("energy", "potential", "J", 1 - t)
    table.add("energy", "total", "J", 1 - t + t**2)
    table.add("energy", "work_drivers", "J", t**2 - t)
    table.add("energy", "work_dampers", "J", 0 * t)
    return table


def test_simulation_figure_is_driven_by_column_names(mpl, tmp_path):
    from linkcli.plot.figures import simulation_figure

    table = synthetic_simulation_table()
    fig = simulation_figure(table, tmp_path / "sim.png")
    assert (tmp_path / "sim.png").stat().st_size > 0
    t = table["t [s]"]
    lines = {}
    for ax in fig.axes:
        for ln in ax.get_lines():
            lines[(ax.get_title(), ln.get_label())] = ln
    titles = {ax.get_title() for ax in fig.axes if ax.get_visible()}
    assert {"joint variables", "driver torque / force", "energy balance"} <= titles
    np.testing.assert_allclose(lines[("joint variables", "crank_pin")].get_ydata(), 360 * t)
    np.testing.assert_allclose(lines[("driver torque / force", "motor torque")].get_ydata(), np.sin(t))
    assert not any(label.startswith("spring") for (_, label) in lines)  # springs are not drivers
    reac = next(v for (title, label), v in lines.items() if label == "joint A")
    np.testing.assert_allclose(reac.get_ydata(), 5 * t)  # |(3t, 4t)|
    np.testing.assert_allclose(lines[("energy balance", "total")].get_ydata(), 1 - t + t**2)
    budget = next(v for (title, label), v in lines.items() if label.startswith("initial + work"))
    np.testing.assert_allclose(budget.get_ydata(), 1 + t**2 - t)
    assert all(ax.get_xlabel() in ("", "t [s]") for ax in fig.axes)


def test_simulate_plot(mpl, run_cli, tmp_path, captured_figures):
    out = tmp_path / "sim.png"
    r = run_cli("simulate", REPO / "mechanisms" / "double_pendulum.yaml", "--t-end", "0.05", "--dt", "0.005",
               "--plot", out, "-o", tmp_path / "sim.csv", "-q")
    assert r.exit_code == 0, r.output
    assert out.stat().st_size > 0
    import csv

    with open(tmp_path / "sim.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    fig = captured_figures[0]
    qax = next(ax for ax in fig.axes if ax.get_title() == "joint variables")
    shoulder = next(ln for ln in qax.get_lines() if ln.get_label() == "shoulder")
    np.testing.assert_allclose(shoulder.get_ydata(), [float(r["shoulder.q [deg]"]) for r in rows])


# -- animate -------------------------------------------------------------------------------------
def test_animate_gif(mpl, run_cli, fourbar_path, tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    out = tmp_path / "m.gif"
    r = run_cli("animate", fourbar_path, "--sweep", "crank_pin=0:360:10", "--frames", "6", "--fps", "5",
               "-o", out)
    assert r.exit_code == 0, r.output
    with Image.open(out) as im:
        assert im.format == "GIF" and im.n_frames == 6


def test_animation_frames_follow_the_motion(mpl, monkeypatch, tmp_path):
    """The artists of each written frame sit where the kinematics puts the mechanism."""
    from matplotlib.animation import PillowWriter

    from linkcli.plot import animate as animation

    mech, table = solve_table(REPO / "mechanisms" / "slider_crank.yaml", "crank_pin=0:360:30")
    q = q_from_table(mech, table)
    seen = []
    real_grab = PillowWriter.grab_frame

    def grab(self, **kw):
        ax = self.fig.axes[0]
        art = by_gid(ax)
        seen.append((artist_xyz(art["joint:A"], True)[0], artist_xyz(art["slider:slide"], True).mean(axis=0),
                     artist_xyz(art["trace"], True)))
        real_grab(self, **kw)

    monkeypatch.setattr(PillowWriter, "grab_frame", grab)
    n = animation.animate(mech, q, tmp_path / "s.gif", frames=4)
    assert n == 4 and len(seen) == 4
    rows = frame_indices(len(q), 4)
    for k, (A, block, trace) in enumerate(seen):
        _, jp, jc, eff, _ = expected(mech, q[rows[k]])
        np.testing.assert_allclose(A, jp[mech.joint_index("A")], atol=1e-9)
        np.testing.assert_allclose(block, jc[mech.joint_index("slide")], atol=1e-9)
        assert len(trace) == rows[k] + 1  # the traced path grows up to the current point
        np.testing.assert_allclose(trace[-1], eff, atol=1e-9)


def test_animate_mp4_without_ffmpeg_is_a_clear_error(mpl, run_cli, fourbar_path, tmp_path, monkeypatch):
    from matplotlib.animation import FFMpegWriter

    monkeypatch.setattr(FFMpegWriter, "isAvailable", classmethod(lambda cls: False))
    r = run_cli("animate", fourbar_path, "-o", tmp_path / "m.mp4")
    assert r.exit_code == ExitCode.USAGE
    assert "ffmpeg" in r.stderr and ".gif" in r.stderr and "Traceback" not in r.output


def test_animate_without_a_sweep_says_how(mpl, run_cli, tmp_path):
    r = run_cli("animate", REPO / "mechanisms" / "double_pendulum.yaml", "-o", tmp_path / "m.gif")
    assert r.exit_code == ExitCode.USAGE
    assert "--sweep" in r.stderr and "--simulate" in r.stderr


def test_animate_simulation(mpl, run_cli, tmp_path, monkeypatch):
    pytest.importorskip("PIL")
    from matplotlib.animation import PillowWriter

    frames = []
    real_grab = PillowWriter.grab_frame

    def grab(self, **kw):  # Pillow merges identical GIF frames: count what is written instead
        frames.append(self.fig.axes[0].get_title())
        real_grab(self, **kw)

    monkeypatch.setattr(PillowWriter, "grab_frame", grab)
    out = tmp_path / "sim.gif"
    r = run_cli("animate", REPO / "mechanisms" / "double_pendulum.yaml", "--simulate", "--t-end", "0.5",
               "--dt", "0.01", "--frames", "4", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:6] in (b"GIF87a", b"GIF89a")
    assert len(frames) == 4 and frames[0].endswith("t = 0.000 s") and frames[-1].endswith("t = 0.500 s")


def test_solve_plot_with_failed_points_still_draws_and_exits_1(mpl, run_cli, fourbar_text, write_mech, tmp_path,
                                                               captured_figures):
    # coupler 1: the crank cannot turn fully; the rows that do not assemble are NaN, not drawn
    path = write_mech(fourbar_text.replace("B: [3.5, 0], P: [1.75, 0.6]", "B: [1.0, 0], P: [0.5, 0.3]")
                      .replace("between: [A, B], mass: 3.5", "between: [A, B], mass: 1.0"))
    out = tmp_path / "p.png"
    r = run_cli("solve", path, "--sweep", "crank_pin=0:360:10", "--plot", out, "-f", "csv")
    assert r.exit_code == ExitCode.ANALYSIS_FAILED, r.output
    assert out.stat().st_size > 0
    art = by_gid(captured_figures[0].axes[0])
    y = art["path:coupler.P"].get_ydata()
    assert np.isnan(y).any() and np.isfinite(y).any()
