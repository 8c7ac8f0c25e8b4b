"""``linkcli info FILE``: what a mechanism file describes (links, joints, variables, loops,
mobility, elements, warnings), as a readable summary or as JSON."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import typer

from ..common import load_and_compile, print_diagnostics, print_json, stdout_console
from ..options import MechanismFile, QuietOption, SummaryFormat, SummaryFormatOption

if TYPE_CHECKING:  # pragma: no cover
    from linkcli.core.mechanism import CompiledMechanism
    from linkcli.errors import Diagnostic
    from linkcli.io.loader import LoadedMechanism
    from linkcli.model.mechanism import Mechanism

def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def rank_mobility(mech: CompiledMechanism) -> dict[str, Any]:
    """Mobility from the rank of the constraint Jacobian at the assembled configuration (the
    file's assembly estimate, closed by the solver), with the assembly status."""
    from linkcli.core.loop_closure import STATUS_TEXT, Status
    from linkcli.core.mobility import mobility_report
    from linkcli.core.sweep import configuration_at

    res = configuration_at(mech, mech.q_init[mech.q_actuated])
    data = _as_dict(mobility_report(mech, res.q))
    assembled = int(res.status) == Status.CONVERGED
    return {"mobility": int(data["mobility"]), "at": "assembled configuration" if assembled
            else "assembly estimate (it did not assemble: " + STATUS_TEXT[Status(int(res.status))] + ")",
            "assembly_residual": _finite(float(res.residual.max(initial=0.0))), "details": data}


def _redundancy_note(details: dict) -> str:
    """`` (3 redundant constraints)`` etc. for the one-line mobility summary."""
    notes = []
    if details.get("redundant"):
        notes.append(f"{details['redundant']} redundant constraint equations")
    if details.get("passive_rank_deficit"):
        notes.append(f"{details['passive_rank_deficit']} passive motion(s) not fixed by the actuators")
    return f" ({'; '.join(notes)})" if notes else ""


def _as_dict(obj: Any) -> dict[str, Any]:
    import dataclasses

    from linkcli.results import json_safe

    if isinstance(obj, dict):
        raw = dict(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        raw = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    elif isinstance(obj, int):
        raw = {"mobility": obj}
    else:
        raw = {k: v for k, v in vars(obj).items() if not k.startswith("_")} if hasattr(obj, "__dict__") else {}
        if "mobility" not in raw and hasattr(obj, "mobility"):
            raw["mobility"] = obj.mobility
    return json_safe(raw)


def actuation_warnings(loaded: LoadedMechanism[Mechanism], mech: CompiledMechanism,
                       rank: dict[str, Any] | None = None, over_only: bool = False) -> list[Diagnostic]:
    """A warning at ``joints`` when the number of actuated variables differs from the mobility
    (by rank at the assembled configuration, else Gruebler): over-actuated inputs cannot all be
    chosen (solve finds no assembly), under-actuated ones leave the pose undetermined (normal
    for a mechanism meant for ``simulate``: ``over_only`` leaves that case out)."""
    from linkcli.errors import Diagnostic

    if rank is None and over_only and len(mech.q_actuated) <= mech.gruebler_mobility:
        # the rank mobility n_q - rank(J) is at least Gruebler's n_q - n_constraints (J has
        # n_constraints rows): never over-actuated, no assembly needed (validate: ~8 ms)
        return []
    rank = rank_mobility(mech) if rank is None else rank
    mobility = rank["mobility"] if rank["mobility"] is not None else mech.gruebler_mobility
    by = "rank" if rank["mobility"] is not None else "Gruebler"
    n_act = len(mech.q_actuated)
    # nothing actuated: a free mechanism (a pendulum), meant for simulate and forces
    # --equilibrium, not an actuation mistake (info says so on its "actuated: none" line)
    if n_act == mobility or (over_only and n_act < mobility) or n_act == 0:
        return []
    if n_act > mobility:
        msg = (f"{n_act} actuated variable{'s' * (n_act != 1)} but the mobility ({by}) is {mobility}: "
               "over-actuated, the inputs cannot all be chosen freely")
        hint = "Set `actuated: false` on joints that follow the others."
    else:
        msg = (f"{n_act} actuated variable{'s' * (n_act != 1)} but the mobility ({by}) is {mobility}: "
               "under-actuated, the pose is not determined by the inputs")
        hint = ("Mark more joints `actuated: true` or check for missing joints, unless the extra freedom "
                "is passive (e.g. a link spinning about the line through two spherical joints).")
    line, col = loaded.line_of("joints")
    return [Diagnostic(loaded.path, line, col, ("joints",), msg, hint, "warning")]


def _si(values) -> float | list:
    import numpy as np

    arr = np.asarray(values, dtype=float)
    return float(arr) if arr.ndim == 0 else [_si(v) for v in arr]


def compiled_parameters(mech: CompiledMechanism, model: Any) -> list[dict[str, Any]]:
    """Every physical parameter as the solver uses it, SI: ``{"parameter", "value", "unit"}``
    (links' mass, cg, inertia; gravity; springs, dampers, loads; driver profiles)."""
    from linkcli.compile import force_elements
    from linkcli.core.mechanism import DRIVE_TORQUE

    rows: list[dict[str, Any]] = []

    def add(key: str, value: Any, unit: str) -> None:
        rows.append({"parameter": key, "value": _si(value), "unit": unit})

    dims = slice(0, 2) if mech.planar else slice(0, 3)
    add("gravity", mech.gravity[dims], "m/s^2")
    for i, name in enumerate(mech.link_names):
        if not mech.link_has_mass[i]:
            continue
        add(f"links.{name}.mass", mech.link_mass[i], "kg")
        add(f"links.{name}.cg", mech.link_cg[i][dims], "m")
        add(f"links.{name}.inertia", mech.link_inertia[i][2, 2] if mech.planar else mech.link_inertia[i], "kg m^2")
    # which compiled element is which spring or damper: compile's own order, from compile
    axial, torsional = force_elements(model)
    for k, (section, name, _) in enumerate(axial):
        if section == "springs":
            add(f"springs.{name}.stiffness", mech.axial_stiffness[k], "N/m")
            add(f"springs.{name}.free_length", mech.axial_free_length[k], "m")
        else:
            add(f"dampers.{name}.damping", mech.axial_damping[k], "N s/m")
    for k, (section, name, _) in enumerate(torsional):
        if section == "springs":
            add(f"springs.{name}.stiffness", mech.torsional_stiffness[k], "N m/rad")
            add(f"springs.{name}.free_angle", mech.torsional_free_angle[k], "rad")
        else:
            add(f"dampers.{name}.damping", mech.torsional_damping[k], "N m s/rad")
    for k, name in enumerate(mech.load_names):
        add(f"loads.{name}.point", mech.load_point[k][dims], "m")
        add(f"loads.{name}.force", mech.load_force[k][dims], "N")
        add(f"loads.{name}.torque", mech.load_torque[k][2] if mech.planar else mech.load_torque[k], "N m")
    for k, name in enumerate(mech.driver_names):
        qi = int(mech.driver_q[k])
        rot = bool(mech.q_is_rotation[qi])
        base = ("N m" if rot else "N") if mech.driver_kind[k] == DRIVE_TORQUE else ("rad" if rot else "m")
        units = {"value": base, "start": base, "end": base, "offset": base, "amplitude": base,
                 "speed": base + "/s", "t_start": "s", "t_end": "s", "frequency": "Hz", "phase": "rad"}
        prof = mech.driver_profile[k]
        for key, value in prof.params.items():
            if key in units:
                add(f"drivers.{name}.{key}", value, units[key])
        if prof.t is not None:
            add(f"drivers.{name}.t", prof.t, "s")
            add(f"drivers.{name}.values", prof.values, base)
    return rows


def mechanism_info(loaded: LoadedMechanism[Mechanism],
                   mech: CompiledMechanism) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Plain data describing the mechanism (lengths/angles in the file's units) and the warnings
    (loader warnings plus actuation vs mobility)."""
    from linkcli.core.mechanism import JOINT_TYPE_NAMES

    m = loaded.model
    ls, as_ = mech.length_scale, mech.angle_scale
    links = [{"name": name, "mass_given": bool(mech.link_has_mass[i]),
              "mass": float(mech.link_mass[i]) if mech.link_has_mass[i] else None,
              "frames": [f.split(".", 1)[1] for f, li in zip(mech.frame_names, mech.frame_link, strict=True)
                         if li == i and "." in f]}
             for i, name in enumerate(mech.link_names)]
    loop_of = {int(j): k for k, j in enumerate(mech.loop_joint)}
    joints = []
    for j, name in enumerate(mech.joint_names):
        s, c = int(mech.joint_q_start[j]), int(mech.joint_q_count[j])
        spec = m.joints.get(name)
        joints.append({
            "name": name, "type": JOINT_TYPE_NAMES[int(mech.joint_type[j])],
            "parent": spec.parent if spec else mech.link_names[int(mech.joint_parent[j])],
            "child": spec.child if spec else mech.link_names[int(mech.joint_child[j])],
            "variables": list(mech.q_names[s:s + c]), "actuated": bool(mech.joint_actuated[j]),
            "closes_loop": loop_of.get(j),
        })
    actuated = [mech.q_names[i] for i in mech.q_actuated]
    variables = []
    for i, name in enumerate(mech.q_names):
        rot = bool(mech.q_is_rotation[i])
        scale = as_ if rot else ls
        variables.append({
            "name": name, "joint": mech.joint_names[int(mech.q_joint[i])], "kind": "angle" if rot else "length",
            "unit": mech.angle_unit if rot else mech.length_unit, "actuated": name in actuated,
            "initial": float(mech.q_init[i] / scale),
            "lower": _finite(mech.q_lower[i] / scale), "upper": _finite(mech.q_upper[i] / scale),
        })
    loops = [{"index": k, "closed_by": mech.joint_names[int(j)]} for k, j in enumerate(mech.loop_joint)]
    rank = rank_mobility(mech)
    warnings = list(loaded.warnings) + actuation_warnings(loaded, mech, rank)
    n_act = len(actuated)

    def elements(section: dict, fields: tuple[str, ...]) -> list[dict[str, Any]]:
        out = []
        for name, e in section.items():
            item = {"name": name, "type": getattr(e, "type", None)}
            item.update({f: getattr(e, f) for f in fields if getattr(e, f, None) is not None})
            out.append(item)
        return out

    data = {
        "file": loaded.path,
        "sha256": loaded.sha256,
        "name": m.name,
        "description": m.description.strip(),
        "kind": m.kind,
        "units": {"length": mech.length_unit, "angle": mech.angle_unit, "mass": "kg", "inertia": "kg m^2",
                  "gravity": "m/s^2", "force": "N", "torque": "N m", "stiffness": "N/m, N m/rad",
                  "damping": "N s/m, N m s/rad", "time": "s"},
        "base": mech.link_names[0],
        "effector": mech.frame_names[mech.effector_frame],
        "counts": {"links": mech.n_links, "joints": mech.n_joints, "variables": mech.n_q, "loops": mech.n_loops,
                   "constraints": mech.n_constraints, "actuated": n_act},
        "mobility": {"gruebler": mech.gruebler_mobility, "rank": rank["mobility"],
                     "rank_note": rank.get("note", rank.get("at", "")), "rank_details": rank.get("details")},
        "actuated": actuated,
        "links": links,
        "joints": joints,
        "variables": variables,
        "loops": loops,
        "springs": elements(m.springs, ("between", "joint", "stiffness", "free_length", "free_angle")),
        "dampers": elements(m.dampers, ("between", "joint", "damping")),
        "loads": [{"name": n, "link": ld.link, "force": ld.force, "torque": ld.torque} for n, ld in m.loads.items()],
        "drivers": [{"name": n, "joint": d.joint, "kind": d.kind, "type": d.type} for n, d in m.drivers.items()],
        "warnings": [d.to_dict() for d in warnings],
        "si_parameters": compiled_parameters(mech, m),
    }
    return data, warnings


def render_info(data: dict[str, Any]) -> None:
    """The summary on stdout with rich (every file-provided string escaped: no markup, control
    characters as visible escapes)."""
    from rich import box
    from rich.markup import escape as escape_markup
    from rich.table import Table

    from linkcli.errors import visible

    def escape(text: str) -> str:
        return escape_markup(visible(text))

    con = stdout_console()

    def table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
        t = Table(title=title, title_justify="left", title_style="bold", header_style="bold", box=box.SIMPLE_HEAD)
        for col in columns:
            t.add_column(escape(col), overflow="fold")
        for row in rows:
            t.add_row(*(escape(str(cell)) for cell in row))
        con.print(t)

    def num(x: float | None) -> str:
        return "" if x is None else f"{x:.6g}"

    u, c, mob = data["units"], data["counts"], data["mobility"]
    rank = mob["rank"] if mob["rank"] is not None else mob["rank_note"]
    lines = [
        f"[bold]{escape(data['name'])}[/bold]  ({data['kind']}; lengths in {escape(u['length'])}, "
        f"angles in {escape(u['angle'])}; mass kg, force N, torque N m, time s)",
        "\n".join(escape(line) for line in data["description"].split("\n")) if data["description"] else None,
        f"file {escape(data['file'])}  sha256 {data['sha256']}",
        f"{c['links']} links, {c['joints']} joints, {c['variables']} variables, {c['loops']} loops, "
        f"{c['constraints']} constraint equations",
        f"mobility: Gruebler {mob['gruebler']}, rank {escape(str(rank))}"
        + _redundancy_note(mob.get("rank_details") or {}),
        f"actuated: {escape(', '.join(data['actuated']))}" if data["actuated"] else
        f"actuated: none (a free mechanism, mobility {mob['rank'] if mob['rank'] is not None else mob['gruebler']}: "
        "simulate moves it under its loads, forces --equilibrium finds its rest positions; solve, fk, jacobian "
        "and ik need joints marked `actuated: true`)",
        f"base {escape(data['base'])}, effector {escape(data['effector'])}",
    ]
    for line in lines:
        if line is not None:
            con.print(line)
    con.print()
    table("links", ("link", "mass [kg]", "frames"),
          [(ln["name"], num(ln["mass"]) or "-", ", ".join(ln["frames"])) for ln in data["links"]])
    table("joints", ("joint", "type", "parent", "child", "variables", "actuated", "loop"),
          [(j["name"], j["type"], j["parent"], j["child"], ", ".join(j["variables"]), "yes" if j["actuated"] else "",
            "" if j["closes_loop"] is None else f"closes {j['closes_loop']}") for j in data["joints"]])
    table("variables", ("variable", "unit", "initial", "lower", "upper", "actuated"),
          [(v["name"], v["unit"], num(v["initial"]), num(v["lower"]), num(v["upper"]),
            "yes" if v["actuated"] else "") for v in data["variables"]])
    for loop in data["loops"]:
        con.print(f"loop {loop['index']}: closed by joint {escape(loop['closed_by'])}")
    for section in ("springs", "dampers", "loads", "drivers"):
        items = data[section]
        shown = ", ".join(f"{e['name']} ({e.get('type') or e.get('link')})" for e in items) or "none"
        con.print(f"{section}: {escape(shown)}")

    def value(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return f"{v:.6g}"

    con.print()
    table("physical parameters as the solver uses them (SI)", ("parameter", "value", "unit"),
          [(p["parameter"], value(p["value"]), p["unit"]) for p in data["si_parameters"]])


def info(file: MechanismFile, fmt: SummaryFormatOption = SummaryFormat.table, quiet: QuietOption = False) -> None:
    """Summarise a mechanism: links, joints, variables, loops, mobility (Gruebler and rank),
    actuated variables, springs, dampers, loads and drivers.

    Lengths and angles are in the file's units; the last table ("si_parameters" in the JSON)
    lists every physical parameter the solver uses (masses, cg, inertias, gravity, springs,
    dampers, loads, drivers) in SI. Warnings go to stderr (and into the JSON, under "warnings").
    With --format json, stdout holds only the JSON document.
    """
    loaded, mech = load_and_compile(file)
    data, warnings = mechanism_info(loaded, mech)
    if fmt == SummaryFormat.json:
        print_json(data)
    else:
        render_info(data)
    print_diagnostics(warnings, quiet)


def register(app: typer.Typer) -> None:
    app.command("info", short_help="Summarise a mechanism: links, joints, variables, loops, mobility, elements.")(info)
