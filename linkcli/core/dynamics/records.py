"""The one declaration of the kernels' records: every field of the dynamics model
(:class:`~.structs.DynModel`) and of the integrator's work arrays (:class:`~.structs.Work`)
with its dtype, shape, unit and meaning.

Everything else derives from these tables: the namedtuples and their documentation
(:mod:`.structs`), the numba StructRef types and their constructors (the generated module
:mod:`.structs_generated`, written by :func:`generated_source`: numba caches compiled
functions only from real source files, and a constructor built with ``exec`` is compiled
again in every process, ~0.7 s), and the column indices of packed arrays (checked against
:mod:`.layout` by the tests).

Conventions: body index -1 is the base. With ``n_b`` bodies the generalized velocity has
``n = nd * n_b`` entries, ``nd`` = 3 planar ``(v_x, v_y, w_z)`` / 6 spatial ``(v, w)``;
world frame, CG velocities. ``n_j`` joints, ``n_q`` joint variables, ``n_r`` constraint
rows (active rows first in the work arrays), ``n_a`` axial and ``n_t`` torsional elements,
``n_l`` constant loads on moving links, ``n_d`` torque/force drivers, ``n_e`` dampers, ``N =
n + n_r`` unknowns of a step. All quantities SI.

Regenerate :mod:`.structs_generated` after editing a table with
``python -m linkcli.core.dynamics.records`` (``tests/test_dynamics_records.py`` fails while
it is stale).
"""

from __future__ import annotations

from typing import NamedTuple


class Field(NamedTuple):
    """One field of a record: ``dtype`` "int" (int64) or "float" (float64); ``shape`` the
    array's dimensions (symbols or numbers; empty for a scalar); ``columns`` the names of
    the :mod:`.layout` constants indexing the second axis of a packed array."""

    name: str
    dtype: str
    shape: tuple
    unit: str
    description: str
    columns: tuple = ()

    @property
    def ndim(self) -> int:
        return len(self.shape)


MODEL_FIELDS = (
    Field("planar", "int", (), "1", "1 planar, 0 spatial"),
    Field("body_mass", "float", ("n_b",), "kg", "mass of each body"),
    Field("body_inertia", "float", ("n_b", 3, 3), "kg m^2",
          "inertia tensor about the CG in link axes (planar: Izz only)"),
    Field("coordinate_scale", "float", ("n",), "1 or 1/m",
          "per generalized coordinate: 1 for translations, 1/mechanism_size for rotations (turns "
          "moments into forces and angles into lengths in the convergence tests)"),
    Field("gravity", "float", (3,), "m/s^2", "gravitational acceleration, world frame"),
    Field("joint_index", "int", ("n_j", 5), "1",
          "per joint: type, parent and child body, first joint variable and their number",
          ("J_TYPE", "J_PARENT_BODY", "J_CHILD_BODY", "J_Q_START", "J_Q_COUNT")),
    Field("joint_vectors", "float", ("n_j", 6, 3), "m or 1",
          "per joint: the joint-frame origins on the parent and the child (m, relative to the "
          "CG in body axes; world for the base); the joint axis and two perpendiculars "
          "(right-handed, unit) in parent body axes; the first perpendicular in child body axes",
          ("J_PARENT_ORIGIN", "J_CHILD_ORIGIN", "J_PARENT_AXIS", "J_PARENT_NORMAL1", "J_PARENT_NORMAL2",
           "J_CHILD_NORMAL1")),
    Field("joint_rotations", "float", ("n_j", 2, 3, 3), "1",
          "per joint: rotation of the joint frame in parent body axes, then in child body axes"),
    Field("q_axis", "float", ("n_q", 3), "1", "axis of each joint variable (unit, joint frame)"),
    Field("q_is_rotation", "int", ("n_q",), "1", "1 for a rotation (rad), 0 for a translation (m)"),
    Field("row_index", "int", ("n_r", 3), "1",
          "per constraint row: kind (see constraints), joint, motion driver or -1",
          ("R_KIND", "R_JOINT", "R_DRIVER")),
    Field("row_vectors", "float", ("n_r", 2, 3), "1",
          "per constraint row: its vectors (u, w) in the joint frame (see constraints.row_table)"),
    Field("axial_bodies", "int", ("n_a", 2), "1", "per axial element: the bodies of its ends a, b"),
    Field("axial_points", "float", ("n_a", 2, 3), "m",
          "per axial element: its end points relative to the CG of their body, body axes"),
    Field("axial_parameters", "float", ("n_a", 3), "N/m, m, N s/m",
          "per axial element: stiffness, free length, damping",
          ("K_STIFFNESS", "K_FREE_POSITION", "K_DAMPING")),
    Field("torsional_index", "int", ("n_t", 2), "1", "per torsional element: its joint and joint variable"),
    Field("torsional_parameters", "float", ("n_t", 3), "N m/rad, rad, N m s/rad",
          "per torsional element: stiffness, free angle, damping",
          ("K_STIFFNESS", "K_FREE_POSITION", "K_DAMPING")),
    Field("load_body", "int", ("n_l",), "1", "per constant load: the body it acts on"),
    Field("load_vectors", "float", ("n_l", 3, 3), "m, N, N m",
          "per constant load: point of application relative to the CG (body axes), force and "
          "torque (world frame)", ("L_POINT", "L_FORCE", "L_TORQUE")),
    Field("torque_driver_index", "int", ("n_d", 4), "1",
          "per torque/force driver: its joint, joint variable, driver (profile column), 1 if the "
          "variable is a rotation", ("D_JOINT", "D_VARIABLE", "D_DRIVER", "D_IS_ROTATION")),
    Field("damper_index", "int", ("n_e", 2), "1",
          "per damper: kind (AXIAL or TORSIONAL) and the index of its element", ("E_KIND", "E_ELEMENT")),
    Field("damper_coefficient", "float", ("n_e",), "N s/m or N m s/rad", "per damper: damping coefficient"),
    Field("mechanism_size", "float", (), "m", "size of the mechanism (loop_closure.mechanism_size)"),
    Field("force_scale", "float", (), "N",
          "force typical of the loads (weights, springs, loads), for the convergence tests"),
)

_AT_K, _AT_K1 = "at t_k (the state)", "at the trial t_{k+1}"
WORK_FIELDS = (
    Field("rows", "int", ("n_r",), "1", "constraint rows of the model, the active ones first"),
    Field("pos", "float", ("n_b", 3), "m", "CG positions " + _AT_K + ", world frame"),
    Field("rot", "float", ("n_b", 3, 3), "1", "body-to-world rotations " + _AT_K),
    Field("ang", "float", ("n_b",), "rad", "planar: continuous rotation angle " + _AT_K),
    Field("vel", "float", ("n_b", 3), "m/s", "CG velocities " + _AT_K + ", world frame"),
    Field("omg", "float", ("n_b", 3), "rad/s", "angular velocities " + _AT_K + ", world frame"),
    Field("q", "float", ("n_q",), "m or rad", "joint variables " + _AT_K),
    Field("JW", "float", ("n_j", 8, 3), "m or 1",
          "joint geometry " + _AT_K + " (kinematics.joint_geometry), world frame",
          ("G_ORIGIN_A", "G_ARM_A", "G_ORIGIN_B", "G_ARM_B", "G_NORMAL1_A", "G_NORMAL2_A", "G_NORMAL1_B",
           "G_AXIS_A")),
    Field("Qf", "float", ("n",), "N or N m", "applied generalized forces " + _AT_K),
    Field("G", "float", ("n_r", "n"), "1 or m", "constraint Jacobian rows " + _AT_K + " (rows in `rows` order)"),
    Field("s", "float", ("n_e",), "m or rad", "damper coordinates (length or angle) " + _AT_K),
    Field("D", "float", ("n_e", "n"), "1 or m", "gradients of the damper coordinates " + _AT_K),
    Field("pos1", "float", ("n_b", 3), "m", "CG positions " + _AT_K1),
    Field("rot1", "float", ("n_b", 3, 3), "1", "body-to-world rotations " + _AT_K1),
    Field("ang1", "float", ("n_b",), "rad", "planar rotation angles " + _AT_K1),
    Field("q1", "float", ("n_q",), "m or rad", "joint variables " + _AT_K1),
    Field("JW1", "float", ("n_j", 8, 3), "m or 1", "joint geometry " + _AT_K1,
          ("G_ORIGIN_A", "G_ARM_A", "G_ORIGIN_B", "G_ARM_B", "G_NORMAL1_A", "G_NORMAL2_A", "G_NORMAL1_B",
           "G_AXIS_A")),
    Field("Qf1", "float", ("n",), "N or N m", "applied generalized forces " + _AT_K1),
    Field("G1", "float", ("n_r", "n"), "1 or m", "constraint Jacobian rows " + _AT_K1),
    Field("g1", "float", ("n_r",), "m or rad",
          "constraint values " + _AT_K1 + "; right-hand side of the velocity step"),
    Field("s1", "float", ("n_e",), "m or rad", "damper coordinates " + _AT_K1),
    Field("D1", "float", ("n_e", "n"), "1 or m", "gradients of the damper coordinates " + _AT_K1),
    Field("P", "float", ("n",), "N s or N m s",
          "momentum plus half-step force impulse; after the position step p_{k+1/2}"),
    Field("r", "float", ("n",), "N s or N m s", "residual of the position step's momentum balance"),
    Field("nu", "float", ("n_r",), "N s", "position-step impulses h/2 lambda_k of the active rows"),
    Field("nu2", "float", ("n_r",), "N s", "velocity-step impulses h/2 mu_k of the active rows"),
    Field("B", "float", ("N", "3 bw + 1"), "mixed", "band storage of the step matrix (linalg.band_lu_factor)"),
    Field("piv", "int", ("N",), "1", "pivot rows of the band LU"),
    Field("rhs", "float", ("N",), "mixed", "right-hand side, then solution, of a step's linear system"),
    Field("xb", "float", ("N",), "mixed", "the same in the bandwidth-reducing order (scratch)"),
    Field("S", "float", (3, 3, 3), "mixed", "three 3x3 scratch matrices"),
    Field("acc", "float", ("n",), "m/s^2 or rad/s^2",
          "velocity change of the last step over h: the predictor's acceleration"),
    Field("order", "int", ("N",), "1",
          "position of every unknown (body components, then all rows) in the reverse Cuthill-McKee order"),
    Field("kkt_pos", "int", ("N",), "1",
          "position in the banded system of each unknown of the step, -1 for an eliminated component"),
    Field("band", "int", (2,), "1", "bandwidth and order of the banded system of a step (after the elimination)"),
    Field("eliminated", "int", ("n",), "1",
          "1 for the body components eliminated first by their own mass block (ordering.eliminable_components)"),
    Field("inverse_blocks", "float", ("n_b", "nd", "nd"), "1/kg or 1/(kg m^2)",
          "inverse of each body's mass block on its eliminated components (zero elsewhere), of the current step"),
    Field("eliminated_rows", "float", ("n_r", "n"), "m/kg or 1/kg",
          "A_e^-1 G^T of the active rows on the eliminated components (zero elsewhere)"),
    Field("eliminated_rhs", "float", ("n",), "m/s or 1/s",
          "A_e^-1 a of the current solve on the eliminated components"),
    Field("body_row_start", "int", ("n_b + 1",), "1", "start of each body's active rows in body_row_list"),
    Field("body_row_list", "int", ("2 n_r",), "1",
          "the active rows (positions in rows) touching each body, body by body"),
)

RECORDS = {"DynModel": MODEL_FIELDS, "Work": WORK_FIELDS}
# record -> (StructRef type class, proxy class, type instance, constructor) names in the generated module
STRUCT_NAMES = {"DynModel": ("ModelStruct", "ModelProxy", "MODEL_TYPE", "model_struct"),
                "Work": ("WorkStruct", "WorkProxy", "WORK_TYPE", "work_struct")}

_NUMBA_DTYPE = {"int": "types.int64", "float": "types.float64"}


def field_doc(f: Field) -> str:
    """One line per field: shape, unit, meaning (and its columns)."""
    shape = "scalar" if not f.shape else "(" + ", ".join(map(str, f.shape)) + ("," if f.ndim == 1 else "") + ")"
    cols = f"; columns {', '.join(f.columns)}" if f.columns else ""
    return f"{f.dtype} {shape} [{f.unit}]: {f.description}{cols}"


def record_doc(fields: tuple) -> str:
    """The fields of a record as an indented list, for its docstring."""
    return "\n".join(f"    {f.name}: {field_doc(f)}" for f in fields)


def generated_source() -> str:
    """Text of :mod:`.structs_generated`: for each record a numba StructRef type with the
    declared fields and a cached constructor setting every field from the namedtuple."""
    out = ['"""GENERATED from the declarations in records.py by records.generated_source(); do not edit.',
           "",
           "Regenerate with ``python -m linkcli.core.dynamics.records`` (tests/test_dynamics_records.py",
           "fails while this file is stale). numba StructRef types of the kernel records and their",
           "constructors, in a real source file so that numba caches them (see records.py).",
           '"""',
           "",
           "import numba",
           "from numba.core import types",
           "from numba.experimental import structref",
           "",
           "from linkcli.core.dynamics import structref_access",
           ""]
    for record, fields in RECORDS.items():
        cls, proxy, type_name, ctor = STRUCT_NAMES[record]
        out += ["", "@structref_access.register", f"class {cls}(types.StructRef):", "    pass", "", "",
                f"class {proxy}(structref.StructRefProxy):", "    pass", "", "",
                f"structref.define_boxing({cls}, {proxy})", f"{type_name} = {cls}(["]
        for f in fields:
            t = _NUMBA_DTYPE[f.dtype]
            t = t if f.ndim == 0 else f'types.Array({t}, {f.ndim}, "C")'
            out.append(f'    ("{f.name}", {t}),')
        out += ["])", "", "", "@numba.njit(cache=True)", f"def {ctor}(t):",
                f'    """StructRef of the {record} namedtuple ``t`` sharing its arrays (no copy)."""',
                f"    s = structref.new({type_name})"]
        out += [f"    s.{f.name} = t.{f.name}" for f in fields]
        out += ["    return s", ""]
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    from pathlib import Path

    target = Path(__file__).with_name("structs_generated.py")
    target.write_text(generated_source(), encoding="utf-8")
    print(f"wrote {target}")
