"""Invalid mechanism files: every problem is a MechanismFileError whose diagnostics name the
line of the offending key, its key path, what is wrong and how to fix it.

The table ``BAD`` holds one small file per mistake: most are one-line edits of ``FOURBAR`` (a
planar four-bar in flow style, whose line numbers are listed next to it) or ``ARM`` (a spatial
DH arm), so the expected line is easy to check by eye. Each case states the EXACT line and key
path of the first diagnostic, a piece of its message and a piece of its hint (how to fix it).
Files of bytes (binary, bad UTF-8, huge) are written as bytes.

Further tests: all problems of a file at once, sorted by line; the one-line format
``path:line:col: error: key.path: what. how to fix``; warnings; traps that must NOT be errors
(1e-3, a point mass); and a hypothesis test that random documents and random mutations of the
example files only ever raise MechanismFileError (never another exception).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkcli.compile import compile_mechanism
from linkcli.errors import MechanismFileError
from linkcli.io.loader import load_mechanism, validate_document
from linkcli.io.yaml_source import MAX_BYTES, load_yaml

DATA = Path(__file__).resolve().parent / "data" / "bad"
MECHANISMS = Path(__file__).resolve().parents[1] / "mechanisms"

FOURBAR = """\
name: fb
kind: planar
links:
  ground: {frames: {O2: [0, 0], O4: [4, 0]}}
  crank: {frames: {O2: [0, 0], A: [1, 0]}}
  coupler: {frames: {A: [0, 0], B: [3.5, 0]}}
  rocker: {frames: {O4: [0, 0], B: [3, 0]}}
joints:
  crank_pin: {type: revolute, parent: ground.O2, child: crank.O2, actuated: true}
  A: {type: revolute, parent: crank.A, child: coupler.A}
  B: {type: revolute, parent: coupler.B, child: rocker.B}
  O4: {type: revolute, parent: rocker.O4, child: ground.O4}
base: ground
"""
# lines: 1 name, 2 kind, 3 links, 4 ground, 5 crank, 6 coupler, 7 rocker, 8 joints,
#        9 crank_pin, 10 A, 11 B, 12 O4, 13 base; appended text starts on line 14.

ARM = """\
name: arm
kind: spatial
links:
  base: {}
serial:
  rows:
    - {a: 0, alpha: 90, d: 0.5}
    - {a: 0.4, mass: 2, inertia: [0.1, 0.1, 0.01]}
base: base
"""
# lines: 4 base link, 7 row 0, 8 row 1, 9 base; appended text starts on line 10.

CRANK = "  crank: {{{}frames: {{O2: [0, 0], A: [1, 0]}}}}"  # line 5 with extra keys in front


def edit(base: str, line: int, text: str) -> str:
    """``base`` with its 1-based ``line`` replaced by ``text`` (which may hold several lines)."""
    lines = base.splitlines()
    lines[line - 1] = text
    return "\n".join(lines) + "\n"


def drop(base: str, line: int) -> str:
    lines = base.splitlines()
    del lines[line - 1]
    return "\n".join(lines) + "\n"


def crank(extra: str) -> str:
    """FOURBAR with ``extra`` keys in the crank's flow mapping (line 5)."""
    return edit(FOURBAR, 5, CRANK.format(extra))


def row1(text: str) -> str:
    """ARM with row 1 (line 8) replaced."""
    return edit(ARM, 8, f"    - {text}")


@dataclass(frozen=True)
class Bad:
    id: str
    text: str | bytes
    line: int
    key: str
    message: str
    hint: str  # substring of the hint (every one of these mistakes has a fix to suggest)
    count: int | None = None  # exact number of diagnostics, when it matters


BOMB = """\
name: bomb
a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
"""

BAD = [
    # -- unknown keys, with did-you-mean -------------------------------------------------------
    Bad("unknown-top-level-key", edit(FOURBAR, 2, "kindd: planar"), 2, "kindd",
        "unknown key 'kindd'", "Did you mean 'kind'?"),
    Bad("unknown-key-in-link", crank("mas: 1, "), 5, "links.crank.mas",
        "unknown key 'mas'", "Did you mean 'mass'?"),
    Bad("unknown-key-in-joint",
        edit(FOURBAR, 10, "  A: {type: revolute, parent: crank.A, child: coupler.A, axes: [0, 0, 1]}"),
        10, "joints.A.axes", "unknown key 'axes'", "Did you mean 'axis'?"),
    Bad("unknown-key-without-close-match", FOURBAR + "colour: red\n", 14, "colour",
        "unknown key 'colour'", "Allowed keys here: name, description, kind"),
    Bad("misspelt-required-key-reported-once", edit(FOURBAR, 1, "nmae: fb"), 1, "nmae",
        "unknown key 'nmae'", "Did you mean 'name'?", count=1),
    Bad("unknown-key-in-frame-mapping",
        edit(FOURBAR, 4, "  ground: {frames: {O2: {origin: [0, 0], angel: 0}, O4: [4, 0]}}"),
        4, "links.ground.frames.O2.angel", "unknown key 'angel'", "Did you mean 'angle'?"),
    Bad("unknown-key-in-spring", FOURBAR + "springs:\n  k: {type: torsional, joint: B, stifness: 5}\n",
        15, "springs.k.stifness", "unknown key 'stifness'", "Did you mean 'stiffness'?", count=1),
    # -- wrong types -------------------------------------------------------------------------------
    Bad("string-for-number", crank("mass: '1.5', "), 5, "links.crank.mass",
        "expected a number, got '1.5'", "without quotes (kg), or add a unit"),
    Bad("number-with-unit", FOURBAR + "gravity: [0, -9.81 m/s2]\n", 14, "gravity[1]",
        "expected a number, got '-9.81 m/s2'", "pint's unit names"),
    Bad("boolean-for-number", crank("mass: true, "), 5, "links.crank.mass",
        "expected a number, got True", "plain number"),
    Bad("nan-for-number", crank("mass: .nan, "), 5, "links.crank.mass",
        "expected a finite number", "inf and nan are not allowed"),
    Bad("list-for-mapping", FOURBAR + "units: [m, deg]\n", 14, "units",
        "expected a mapping (key: value lines), got ['m', 'deg']", "Write indented `key: value` lines"),
    Bad("mapping-for-list", FOURBAR + "gravity: {x: 0, y: -9.81}\n", 14, "gravity",
        "expected a list such as [1, 2]", "Write the items in brackets"),
    Bad("joints-as-a-list",
        FOURBAR.split("joints:")[0]
        + "joints:\n  - {type: revolute, parent: ground.O2, child: crank.O2}\nbase: ground\n",
        8, "joints", "expected a mapping", "or {key: value, ...}"),
    Bad("list-for-text", edit(FOURBAR, 1, "name: [fb]"), 1, "name", "expected text, got ['fb']",
        "Write plain text"),
    Bad("mapping-for-inertia", crank("mass: 1, inertia: {Izz: 1}, "), 5, "links.crank.inertia",
        "expected a number, a list of numbers or a 3x3 matrix, got {'Izz': 1}", "plain number", count=1),
    # -- missing required fields ------------------------------------------------------------------
    Bad("missing-name", drop(FOURBAR, 1), 1, "name", "missing required key 'name'", "Add `name: ...`"),
    Bad("missing-base", drop(FOURBAR, 13), 1, "base", "missing required key 'base'", "Add `base: ...`"),
    Bad("missing-joint-type", edit(FOURBAR, 10, "  A: {parent: crank.A, child: coupler.A}"), 10,
        "joints.A.type", "missing required key 'type'", "Add `type: ...`"),
    Bad("missing-joint-parent", edit(FOURBAR, 10, "  A: {type: revolute, child: coupler.A}"), 10,
        "joints.A.parent", "missing required key 'parent'", "Add `parent: ...`"),
    Bad("missing-joint-child-block-style",
        edit(FOURBAR, 11, "  B:\n    type: revolute\n    parent: coupler.B"), 11,
        "joints.B.child", "missing required key 'child'", "Add `child: ...`"),
    Bad("missing-shape-type", crank("shape: {mass: 1, length: 1}, "), 5, "links.crank.shape.type",
        "missing required key 'type'", "Add `type: ...`"),
    # -- names: duplicates, invalid names ---------------------------------------------------------
    Bad("duplicate-joint-name",
        edit(FOURBAR, 12, "  O4: {type: revolute, parent: rocker.O4, child: ground.O4}\n"
                          "  A: {type: revolute, parent: crank.A, child: coupler.A}"),
        13, "joints.A", "duplicate key 'A' (first defined on line 10)", "remove one of the two"),
    Bad("duplicate-top-level-key", FOURBAR + "name: fb2\n", 14, "name",
        "duplicate key 'name' (first defined on line 1)", "remove one"),
    Bad("invalid-link-name", edit(FOURBAR, 6, "  1coupler: {frames: {A: [0, 0], B: [3.5, 0]}}"), 6,
        "links.1coupler", "'1coupler' is not a valid name", "Names start with a letter"),
    Bad("dh-link-name-taken", FOURBAR + "serial:\n  attach: rocker.B\n  rows:\n    - {name: crank, a: 1}\n",
        17, "serial.rows[0].name", "link name 'crank' is already used", "unique `name`"),
    # -- references ---------------------------------------------------------------------------
    Bad("unknown-link-did-you-mean",
        edit(FOURBAR, 11, "  B: {type: revolute, parent: coupler.B, child: couplr.B}"), 11,
        "joints.B.child", "unknown link 'couplr'",
        "Valid links: ground, crank, coupler, rocker. Did you mean 'coupler'?"),
    Bad("unknown-link-block-style",
        edit(FOURBAR, 11, "  B:\n    type: revolute\n    parent: coupler.B\n    child: couplr.B"), 14,
        "joints.B.child", "unknown link 'couplr'", "Did you mean 'coupler'?"),
    Bad("unknown-frame", edit(FOURBAR, 11, "  B: {type: revolute, parent: coupler.C, child: rocker.B}"), 11,
        "joints.B.parent", "link 'coupler' has no frame 'C'", "Valid frames of coupler: A, B."),
    Bad("malformed-reference", edit(FOURBAR, 11, "  B: {type: revolute, parent: coupler.B.x, child: rocker.B}"),
        11, "joints.B.parent", "'coupler.B.x' is not a reference", "Write `link` or `link.frame`"),
    Bad("unknown-base", edit(FOURBAR, 13, "base: groud"), 13, "base", "unknown link 'groud'",
        "Did you mean 'ground'?"),
    Bad("unknown-effector-frame", FOURBAR + "effector: rocker.C\n", 14, "effector",
        "link 'rocker' has no frame 'C'", "Valid frames of rocker"),
    Bad("effector-on-a-loose-link",
        edit(FOURBAR, 7, "  rocker: {frames: {O4: [0, 0], B: [3, 0]}}\n  lonely: {frames: {p: [0, 0]}}")
        + "effector: lonely.p\n",
        15, "effector", "link 'lonely' is not part of the mechanism (it has no joints)", "Connect it"),
    Bad("unknown-driver-joint", FOURBAR + "drivers:\n  motor: {joint: crank_pn, type: constant_speed, speed: 1}\n",
        15, "drivers.motor.joint", "unknown joint 'crank_pn'", "Did you mean 'crank_pin'?"),
    Bad("unknown-spring-joint", FOURBAR + "springs:\n  k: {type: torsional, joint: Q, stiffness: 1}\n",
        15, "springs.k.joint", "unknown joint 'Q'", "Valid joints: crank_pin, A, B, O4."),
    Bad("unknown-assembly-variable", FOURBAR + "assembly: {crank_pn: 45}\n", 14, "assembly.crank_pn",
        "unknown joint variable 'crank_pn'", "Did you mean 'crank_pin'?"),
    Bad("sweep-of-a-passive-joint", FOURBAR + "analysis:\n  solve:\n    sweep: {A: {from: 0, to: 90, step: 1}}\n",
        16, "analysis.solve.sweep.A", "'A' is not an actuated variable", "Valid actuated variables: crank_pin."),
    Bad("base-is-a-dh-link", edit(ARM, 9, "base: link1"), 9, "base", "unknown link 'link1'",
        "must be a link under `links:`"),
    Bad("serial-attached-to-its-own-link", edit(ARM, 5, "serial:\n  attach: link2"), 6, "serial.attach",
        "unknown link 'link2'", "Valid links under `links:`: base."),
    # -- topology -----------------------------------------------------------------------------
    Bad("joint-parent-equals-child",
        edit(FOURBAR, 10, "  A: {type: revolute, parent: crank.A, child: crank.O2}"), 10,
        "joints.A.child", "joint connects link 'crank' to itself", "Parent and child must be different links"),
    Bad("links-not-connected-to-base",
        edit(edit(FOURBAR, 12, "  O4: {type: revolute, parent: rocker.O4, child: ground.O4}\n"
                               "  ab: {type: revolute, parent: a.p, child: b.p}"),
             7, "  rocker: {frames: {O4: [0, 0], B: [3, 0]}}\n  a: {frames: {p: [0, 0]}}\n  b: {frames: {p: [0, 0]}}"),
        8, "links.a", "link 'a' is not connected to the base 'ground'", "Add a joint", count=2),
    # -- mass properties, springs, dampers ----------------------------------------------------
    Bad("negative-mass", crank("mass: -1, "), 5, "links.crank.mass", "-1 is negative", "must be >= 0"),
    Bad("negative-planar-inertia", crank("mass: 1, inertia: -0.1, "), 5, "links.crank.inertia",
        "inertia has a negative principal moment (-0.1)", "Moments of inertia are >= 0"),
    Bad("planar-inertia-as-list", crank("mass: 1, inertia: [1, 2], "), 5, "links.crank.inertia",
        "inertia has the wrong shape", "Give one number (Izz about the CG)"),
    Bad("inertia-not-symmetric", row1("{a: 0.4, mass: 2, inertia: [[0.1, 0.01, 0], [0, 0.1, 0], [0, 0, 0.1]]}"),
        8, "serial.rows[1].inertia", "inertia matrix is not symmetric", "Ixy = Iyx"),
    Bad("inertia-negative-moment", row1("{a: 0.4, mass: 2, inertia: [0.1, 0.1, 0.1, 0.2, 0, 0]}"),
        8, "serial.rows[1].inertia", "inertia has a negative principal moment", "products of inertia"),
    Bad("inertia-triangle-inequality", row1("{a: 0.4, mass: 2, inertia: [0.1, 0.1, 0.5]}"),
        8, "serial.rows[1].inertia", "violate the triangle inequality (0.1 + 0.1 < 0.5)", "No rigid body"),
    Bad("inertia-item-not-a-number", row1("{a: 0.4, mass: 2, inertia: [0.1, x, 0.1]}"),
        8, "serial.rows[1].inertia[1]", "expected a number, got 'x'", "plain number", count=1),
    Bad("negative-stiffness", FOURBAR + "springs:\n  k: {type: torsional, joint: B, stiffness: -5}\n",
        15, "springs.k.stiffness", "-5 is negative", "must be >= 0"),
    Bad("negative-damping", FOURBAR + "dampers:\n  c: {type: torsional, joint: B, damping: -5}\n",
        15, "dampers.c.damping", "-5 is negative", "must be >= 0"),
    Bad("unknown-spring-type", FOURBAR + "springs:\n  k: {type: torsion, joint: B, stiffness: 5}\n",
        15, "springs.k.type", "unknown type 'torsion'", "Did you mean 'torsional'?"),
    Bad("linear-spring-missing-free-length",
        FOURBAR + "springs:\n  k:\n    between: [crank.A, rocker.B]\n    stiffness: 5\n",
        15, "springs.k.free_length", "missing required key 'free_length'", "Add `free_length: ...`"),
    Bad("load-without-force-or-torque", FOURBAR + "loads:\n  f: {link: crank.A}\n", 15, "loads.f",
        "load has neither force nor torque", "Give force"),
    # -- DH rows ------------------------------------------------------------------------------
    Bad("dh-quoted-number", row1("{a: '0.4', mass: 2}"), 8, "serial.rows[1].a", "expected a number, got '0.4'",
        "without quotes"),
    Bad("dh-list-for-number", row1("{a: [0.4]}"), 8, "serial.rows[1].a", "expected a number, got [0.4]",
        "plain number"),
    Bad("dh-bad-joint-type", row1("{type: spherical, a: 0.4}"), 8, "serial.rows[1].type",
        "'spherical' is not allowed", "Use one of 'revolute' or 'prismatic'"),
    Bad("dh-row-not-a-mapping", row1("0.4"), 8, "serial.rows[1]", "expected a mapping", "key: value"),
    Bad("dh-unknown-key", row1("{a: 0.4, alfa: 90}"), 8, "serial.rows[1].alfa", "unknown key 'alfa'",
        "Did you mean 'alpha'?"),
    Bad("dh-twist-in-planar-file", FOURBAR + "serial:\n  attach: rocker.B\n  rows:\n    - {a: 1, alpha: 90}\n",
        17, "serial.rows[0].alpha", "a nonzero twist takes the chain out of the plane", "kind: spatial"),
    # -- planar geometry ----------------------------------------------------------------------
    Bad("3d-origin-in-planar", edit(FOURBAR, 4, "  ground: {frames: {O2: [0, 0], O4: {origin: [4, 0, 1]}}}"),
        4, "links.ground.frames.O4.origin", "frame leaves the plane", "set kind: spatial"),
    Bad("rpy-in-planar", edit(FOURBAR, 4, "  ground: {frames: {O2: [0, 0], O4: {origin: [4, 0], rpy: [0, 0, 1]}}}"),
        4, "links.ground.frames.O4.rpy", "'rpy' rotates out of the plane", "Planar frames take `angle`"),
    Bad("revolute-axis-not-normal-to-plane",
        edit(FOURBAR, 10, "  A: {type: revolute, parent: crank.A, child: coupler.A, axis: [1, 0, 0]}"), 10,
        "joints.A.axis", "revolute axis is not normal to the plane", "turn about z"),
    Bad("prismatic-axis-out-of-plane",
        edit(FOURBAR, 12, "  O4: {type: prismatic, parent: rocker.O4, child: ground.O4, axis: [1, 0, 1]}"), 12,
        "joints.O4.axis", "prismatic axis leaves the plane", "in-plane direction"),
    Bad("universal-joint-in-planar",
        edit(FOURBAR, 10, "  A: {type: universal, parent: crank.A, child: coupler.A}"), 10,
        "joints.A.type", "a universal joint does not keep motion in the plane", "or set kind: spatial"),
    Bad("3d-gravity-in-planar", FOURBAR + "gravity: [0, 0, -9.81]\n", 14, "gravity",
        "gravity needs 2 numbers for a planar mechanism, got 3", "[x, y]"),
    Bad("two-rotations-in-a-frame",
        edit(FOURBAR, 4, "  ground: {frames: {O2: [0, 0], O4: {origin: [4, 0], angle: 0, rpy: [0, 0, 0]}}}"),
        4, "links.ground.frames.O4.rpy", "a frame takes one rotation, got angle, rpy", "Keep only one"),
    Bad("not-a-rotation-matrix",
        edit(ARM, 4, "  base: {frames: {m: {origin: [0, 0, 0], rotation: [[1, 0, 0], [0, 1, 0], [0, 0, 2]]}}}"),
        4, "links.base.frames.m.rotation", "not a proper rotation matrix", "use rpy"),
    # -- joints, drivers, analysis ------------------------------------------------------------
    Bad("limits-swapped",
        edit(FOURBAR, 9, "  crank_pin: {type: revolute, parent: ground.O2, child: crank.O2, limits: [90, -90]}"),
        9, "joints.crank_pin.limits", "lower limit 90 is above upper limit -90", "Swap them"),
    Bad("assembly-list-wrong-length", FOURBAR + "assembly: {crank_pin: [1, 2]}\n", 14, "assembly.crank_pin",
        "joint 'crank_pin' has 1 variable, got 2 values", "Give 1 value"),
    Bad("driver-on-passive-joint", FOURBAR + "drivers:\n  m: {joint: A, type: constant_speed, speed: 1}\n",
        15, "drivers.m.joint", "joint 'A' is not actuated", "Add `actuated: true` to joint A"),
    Bad("driver-missing-parameter", FOURBAR + "drivers:\n  m: {joint: crank_pin, type: constant_speed}\n",
        15, "drivers.m.speed", "a constant_speed driver needs `speed`", "Add speed: ..."),
    Bad("driver-unknown-type", FOURBAR + "drivers:\n  m: {joint: crank_pin, type: constant_sped, speed: 1}\n",
        15, "drivers.m.type", "'constant_sped' is not allowed", "Did you mean 'constant_speed'?"),
    Bad("sweep-without-step-or-num", FOURBAR + "analysis:\n  solve:\n    sweep: {crank_pin: {from: 0, to: 360}}\n",
        16, "analysis.solve.sweep.crank_pin", "a sweep needs a step or a number of points", "Add step"),
    Bad("sweep-with-step-and-num",
        FOURBAR + "analysis:\n  solve:\n    sweep:\n      crank_pin: {from: 0, to: 360, step: 1, num: 5}\n",
        17, "analysis.solve.sweep.crank_pin.num", "a sweep takes step or num, not both", "Remove step or num"),
    Bad("sweep-without-to", FOURBAR + "analysis:\n  solve:\n    sweep: {crank_pin: {from: 0, step: 1}}\n",
        16, "analysis.solve.sweep.crank_pin.to", "missing required key 'to'", "Add `to: ...`"),
    # -- YAML traps ---------------------------------------------------------------------------
    Bad("yes-is-not-a-boolean", edit(FOURBAR, 9, FOURBAR.splitlines()[8].replace("true", "yes")), 9,
        "joints.crank_pin.actuated", "expected true or false, got 'yes'", "yes/no/on/off are text"),
    Bad("dh-on-is-not-a-boolean", row1("{a: 0.4, actuated: on}"), 8, "serial.rows[1].actuated",
        "expected true or false, got 'on'", "yes/no/on/off are text"),
    Bad("tab-indentation", edit(FOURBAR, 5, "\tcrank: {frames: {O2: [0, 0], A: [1, 0]}}"), 5, "links",
        "found character '\\t' that cannot start any token", "indent with spaces, not tabs"),
    Bad("alias-bomb", BOMB, 6, "e[7]", "aliases expand to too many values", "alias bomb"),
    Bad("merge-key", FOURBAR + "defaults: &d {mass: 1}\nextra:\n  <<: *d\n", 16, "extra.<<",
        "merge keys (`<<`) are not supported", "write the keys out"),
    Bad("python-tag", edit(FOURBAR, 1, "name: !!python/object:os.system fb"), 1, "name",
        "unsupported tag '!!python/object:os.system'", "remove the tag"),
    Bad("two-documents", FOURBAR + "---\nname: other\n", 14, "<document>",
        "a file must hold one YAML document", "remove the `---` line"),
    Bad("unclosed-quote", edit(FOURBAR, 1, "name: 'fb"), 14, "<document>",
        "while scanning a quoted scalar on line 1", "close the quote"),
    Bad("top-level-list", "- name: fb\n- base: ground\n", 1, "<document>",
        "the top level must be a mapping", "write `key: value` lines"),
    Bad("top-level-scalar", "just some text\n", 1, "<document>", "the top level must be a mapping",
        "e.g. `name: four-bar`"),
    Bad("empty-file", "", 1, "<document>", "file is empty", "start with keys such as `name:`"),
    Bad("comments-only", "# nothing here\n\n", 1, "<document>", "file is empty", "start with keys"),
    Bad("binary-garbage", b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\xff\xfe\x00", 1, "<document>",
        "not a text file: it contains NUL bytes", "looks like a binary file"),
    Bad("invalid-utf8", FOURBAR.replace("name: fb", "name: f\xe9b").encode("latin-1"), 1, "<document>",
        "the file is not valid UTF-8 text (byte 0xe9)", "save the file as UTF-8"),
    Bad("huge-file", b"name: big\n" + b"# padding\n" * (MAX_BYTES // 10 + 1), 0, "<document>",
        "file is too large", "check that this is the right file"),
]


def _write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "bad.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _diagnostics(path: Path):
    with pytest.raises(MechanismFileError) as info:
        loaded = load_mechanism(path)
        compile_mechanism(loaded.model)  # not reached: the file must be rejected on load
    diags = info.value.diagnostics
    assert diags, "a MechanismFileError always carries at least one diagnostic"
    return diags


def test_the_table_is_large_and_distinct():
    assert len(BAD) >= 40
    assert len({case.id for case in BAD}) == len(BAD)
    assert len({case.text for case in BAD}) == len(BAD)


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_bad_file(case: Bad, tmp_path):
    path = _write(tmp_path, case.text)
    diags = _diagnostics(path)
    first = diags[0]
    assert (first.line, first.key) == (case.line, case.key), first.format()
    assert first.file == str(path)
    assert first.severity == "error"
    assert case.message in first.message, first.format()
    assert case.hint in first.hint, first.format()
    if case.count is not None:
        assert len(diags) == case.count, [d.format() for d in diags]
    # every diagnostic is located in the file (only whole-file problems such as size have no
    # line) and the list is sorted by position
    assert all(d.line >= 1 and d.col >= 1 for d in diags if d.line)
    assert [(d.line, d.col) for d in diags] == sorted((d.line, d.col) for d in diags)


def test_column_is_that_of_the_offending_key(tmp_path):
    """`child:` inside a one-line flow mapping: line 11, and the column of the `child` key."""
    text = edit(FOURBAR, 11, "  B: {type: revolute, parent: coupler.B, child: couplr.B}")
    (d,) = _diagnostics(_write(tmp_path, text))
    assert (d.line, d.col) == (11, text.splitlines()[10].index("child") + 1)


# -- all problems at once, sorted, and the one-line format -----------------------------------------
def test_three_independent_mistakes_give_three_sorted_diagnostics():
    """tests/data/bad/three_mistakes.yaml: an unknown key in a link (line 8), a negative
    damping (line 17), both rejected by the model, and a reference to a missing link (line 19),
    found by the semantic checks, which run on the rest of the file in the same pass."""
    path = DATA / "three_mistakes.yaml"
    diags = _diagnostics(path)
    assert [(d.line, d.key) for d in diags] == [
        (8, "links.crank.mas"),
        (17, "dampers.c.damping"),
        (19, "base"),
    ]


def test_a_meaningful_value_is_not_left_out_for_the_semantic_checks(tmp_path):
    """When the model rejects a value others depend on (here `kind`), the semantic checks do
    not run on a guess: no follow-on errors the user did not make."""
    text = edit(FOURBAR, 2, "kind: planer") + "effector: rocker.C\n"
    diags = _diagnostics(_write(tmp_path, text))
    assert [(d.line, d.key) for d in diags] == [(2, "kind")]
    assert "Did you mean 'planar'?" in diags[0].hint


def test_every_model_problem_is_reported_sorted_by_line():
    """One type error does not hide the others: all come at once, sorted by line, whatever the
    order pydantic finds them in (top-level fields before those of nested models)."""
    text = FOURBAR + "units: [m]\n"
    text = edit(text, 1, "name: [fb]")
    text = edit(text, 10, "  A: {type: revolute, parent: crank.A, child: coupler.A, actuated: 1}")
    data, smap = load_yaml(text, "t.yaml")
    with pytest.raises(MechanismFileError) as info:
        validate_document(data, smap, "t.yaml")
    assert [(d.line, d.key) for d in info.value.diagnostics] == [
        (1, "name"), (10, "joints.A.actuated"), (14, "units")]


FORMAT = re.compile(r"^(?P<path>.+):(?P<line>\d+):(?P<col>\d+): error: (?P<key>[^: ]+): "
                    r"(?P<what>.+?)\. (?P<fix>[A-Z].+)$")


def test_formatted_message(tmp_path):
    """``path:line:col: error: <key path>: <what>. <how to fix>``, one line per problem."""
    path = _write(tmp_path, edit(FOURBAR, 11, "  B: {type: revolute, parent: coupler.B, child: couplr.B}"))
    with pytest.raises(MechanismFileError) as info:
        load_mechanism(path)
    col = 1 + "  B: {type: revolute, parent: coupler.B, child: couplr.B}".index("child")
    assert str(info.value) == (
        f"{path}:11:{col}: error: joints.B.child: unknown link 'couplr'. "
        "Valid links: ground, crank, coupler, rocker. Did you mean 'coupler'?")
    bad = str(DATA / "three_mistakes.yaml")
    with pytest.raises(MechanismFileError) as info:
        load_mechanism(bad)
    lines = str(info.value).splitlines()
    assert len(lines) == 3
    for line in lines:
        match = FORMAT.match(line)
        assert match and match["path"] == bad, line


# -- warnings and traps that are fine -----------------------------------------------------------------
def test_link_without_joints_is_a_warning_not_an_error(tmp_path):
    # a full body: the only warning is the missing joints
    text = edit(FOURBAR, 7, "  rocker: {frames: {O4: [0, 0], B: [3, 0]}}\n"
                            "  spare: {mass: 1, cg: [0, 0], inertia: 0.1}")
    loaded = load_mechanism(_write(tmp_path, text))
    (w,) = loaded.warnings
    assert (w.severity, w.line, w.key) == ("warning", 8, "links.spare")
    assert "has no joints" in w.message and w.hint
    assert ": warning: links.spare: " in w.format()
    mech = compile_mechanism(loaded.model)
    assert "spare" not in mech.link_names and mech.n_links == 4


def test_exponent_without_dot_is_a_number(tmp_path):
    """YAML 1.1 (PyYAML) reads 1e-3 as text; our reader (YAML 1.2 core schema) as a number."""
    loaded = load_mechanism(_write(tmp_path, crank("mass: 1e-3, inertia: 2E-4, ")))
    link = loaded.model.links["crank"]
    assert (link.mass, link.inertia) == (0.001, 0.0002)


@pytest.mark.parametrize("inertia, kind", [("0", "planar"), ("[0, 0, 0]", "spatial")])
def test_zero_inertia_is_a_point_mass(tmp_path, inertia, kind):
    # cg given: a mass without cg (or without inertia) is a warning saying what was assumed
    if kind == "planar":
        text = crank(f"mass: 2, cg: [0.5, 0], inertia: {inertia}, ")
    else:
        text = row1(f"{{a: 0.4, mass: 2, cg: [-0.2, 0, 0], inertia: {inertia}}}")
    loaded = load_mechanism(_write(tmp_path, text))
    assert loaded.warnings == []
    mech = compile_mechanism(loaded.model)
    assert mech.link_mass.max() == 2.0 and not mech.link_inertia.any()


def test_valid_bases_load():
    for text in (FOURBAR, ARM):
        data, smap = load_yaml(text, "t.yaml")
        compile_mechanism(validate_document(data, smap, "t.yaml").model)


# -- robustness: nothing but MechanismFileError, whatever the input ----------------------------------
EXAMPLES = sorted(MECHANISMS.glob("*.yaml")) + [None]  # None: the FOURBAR text above
_TEXTS = {p: (p.read_text(encoding="utf-8") if p else FOURBAR) for p in EXAMPLES}
_DOCS = {p: yaml.safe_load(t) for p, t in _TEXTS.items()}


def _check(text: str | bytes) -> None:
    """Load + compile; only MechanismFileError may escape (pytest reports anything else)."""
    try:
        data, smap = load_yaml(text, "fuzz.yaml")
        loaded = validate_document(data, smap, "fuzz.yaml")
        compile_mechanism(loaded.model)
    except MechanismFileError as exc:
        assert exc.diagnostics and all(isinstance(d.line, int) for d in exc.diagnostics)


scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                    st.text(max_size=12),
                    st.sampled_from(["revolute", "spherical", "planar", "spatial", "ground", "crank.A",
                                     "rod", "torsional", "linear", "constant_speed", "deg", "rad"]))
keys = st.sampled_from(["name", "kind", "links", "joints", "base", "serial", "rows", "frames", "type",
                        "parent", "child", "mass", "inertia", "cg", "axis", "shape", "springs", "joint",
                        "assembly", "drivers", "analysis", "solve", "sweep", "effector", "a", "x"])
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(keys, inner, max_size=5)),
                         max_leaves=25)


@settings(derandomize=True, deadline=None, max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents, base=st.sampled_from(["name", "kind", "links", "joints"]))
def test_random_documents_only_raise_file_errors(doc, base):
    top = {"name": "x", "base": "ground", base: doc} if not isinstance(doc, dict) else doc
    _check(yaml.safe_dump(top, allow_unicode=True))


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


REPLACEMENTS = [None, True, 0, -1.5, 1e300, "x", "", [], [1, 2, 3], {}, {"a": 1}, [[1, 0], [0, 1]],
                "ground", "crank.A", "revolute", "spherical", "universal", "prismatic", "torsional"]


@st.composite
def mutated_examples(draw):
    """An example file with 1-3 random mutations: delete a key, change a value (and its type),
    rename a reference (drop or add a character), rename a key, or insert garbage bytes."""
    path = draw(st.sampled_from(EXAMPLES))
    doc = copy.deepcopy(_DOCS[path])
    garbage = None
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        where = draw(st.sampled_from(paths))
        parent = doc
        for part in where[:-1]:
            parent = parent[part]
        key = where[-1]
        op = draw(st.sampled_from(["delete", "replace", "rename_ref", "rename_key", "garbage"]))
        if op == "delete":
            del parent[key]
        elif op == "replace":
            parent[key] = copy.deepcopy(draw(st.sampled_from(REPLACEMENTS)))
        elif op == "rename_ref" and isinstance(parent[key], str) and parent[key]:
            parent[key] = parent[key][:-1] if draw(st.booleans()) else parent[key] + "x"
        elif op == "rename_key" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["type", "mass", "joint", "frames", str(key) + "_"]))] = parent.pop(key)
        elif op == "garbage":
            garbage = draw(st.binary(min_size=1, max_size=6))
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode("utf-8")
    if garbage is not None:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + garbage + text[at:]
    return text


@settings(derandomize=True, deadline=None, max_examples=800, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated_examples())
def test_mutated_examples_only_raise_file_errors(text):
    _check(text)


@settings(derandomize=True, deadline=None, max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(EXAMPLES), at=st.floats(0, 1), garbage=st.binary(min_size=1, max_size=8))
def test_garbage_bytes_in_the_raw_text_only_raise_file_errors(path, at, garbage):
    """Raw bytes inserted into the file as written (comments, flow style and all)."""
    raw = _TEXTS[path].encode("utf-8")
    i = int(at * len(raw))
    _check(raw[:i] + garbage + raw[i:])


# -- issue 15: degenerate mechanisms that used to validate silently ------------------------------------
def test_zero_length_link_is_warned(runner, fourbar_text, write_mech):
    """A coupler whose two pins coincide has no direction: its transmission angle is NaN and the
    Jacobian's condition infinite. validate names the link and both frames."""
    from linkcli.cli.app import app

    path = write_mech(fourbar_text.replace("B: [3.5, 0], P:", "B: [0, 0], P:"))
    r = runner.invoke(app, ["validate", path])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == f"ok {path} (1 warning)"
    assert "warning: links.coupler.frames.B: link 'coupler' has zero length" in r.stderr
    assert "joints A and B" in r.stderr


def test_a_short_link_is_not_zero_length(runner, fourbar_text, write_mech):
    from linkcli.cli.app import app

    path = write_mech(fourbar_text.replace("B: [3.5, 0], P:", "B: [1.0e-6, 0], P:"))  # 1 um: short, not zero
    r = runner.invoke(app, ["validate", path])
    assert (r.exit_code, r.stdout.strip()) == (0, f"ok {path}"), r.output


def test_over_actuated_mechanism_is_reported_by_validate(runner, fourbar_text, write_mech):
    """Two inputs on a one-degree-of-freedom four-bar (mobility 0 left for the second): solve
    would find no assembly; validate says so (info did, validate said ok)."""
    from linkcli.cli.app import app

    path = write_mech(fourbar_text.replace("child: coupler.A}", "child: coupler.A, actuated: true}"))
    r = runner.invoke(app, ["validate", path])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == f"ok {path} (1 warning)"
    assert "warning: joints: 2 actuated variables but the mobility (rank) is 1: over-actuated" in r.stderr


def test_under_actuated_mechanisms_for_simulation_validate_quietly(runner):
    from pathlib import Path

    from linkcli.cli.app import app

    path = Path(__file__).resolve().parent.parent / "mechanisms" / "double_pendulum.yaml"
    r = runner.invoke(app, ["validate", str(path)])
    assert (r.exit_code, r.stderr) == (0, "")


TRIANGLE = """\
name: triangle (a structure)
kind: planar
units: {length: m, angle: deg}
links:
  ground: {frames: {O: [0, 0], C: [2, 0]}}
  a: {frames: {O: [0, 0], B: [1, 0]}}
  b: {frames: {B: [0, 0], C: [1.4142135623730951, 0]}}
joints:
  J1: {type: revolute, parent: ground.O, child: a.O, actuated: true}
  J2: {type: revolute, parent: a.B, child: b.B}
  J3: {type: revolute, parent: b.C, child: ground.C}
base: ground
effector: a.B
assembly: {J1: 45, J2: -90, J3: 0}
"""


def test_structure_with_an_input_is_over_actuated(runner, write_mech):
    """Issue 15's case: mobility 0 (Gruebler 3*(3-1) - 2*3 = 0 and rank), one input: solve can
    only fail; validate said ok."""
    from linkcli.cli.app import app

    path = write_mech(TRIANGLE)
    r = runner.invoke(app, ["validate", path])
    assert r.exit_code == 0 and r.stdout.strip() == f"ok {path} (1 warning)"
    assert f"{path}:8:1: warning: joints: 1 actuated variable but the mobility (rank) is 0: over-actuated" in r.stderr


def test_validate_skips_the_assembly_only_where_the_rank_cannot_show_over_actuation(fourbar_text, write_mech):
    """validate looks for over-actuation without assembling when the actuated count is within
    Gruebler's mobility (the rank mobility n_q - rank(J) is never below n_q - n_constraints).
    Truth: the warnings computed from the rank at the assembled configuration, for every example
    (overconstrained ones such as Bennett and Sarrus, Gruebler below the rank mobility, included)
    and for over-actuated files."""
    from pathlib import Path

    from linkcli.cli.commands.info import actuation_warnings, rank_mobility
    from linkcli.cli.common import load_and_compile

    root = Path(__file__).resolve().parent.parent / "mechanisms"
    files = sorted(str(p) for p in [*root.glob("*.yaml"), *(root / "gallery").glob("*.yaml")])
    files += [write_mech(fourbar_text.replace("child: coupler.A}", "child: coupler.A, actuated: true}")),
              write_mech(TRIANGLE)]
    shortcut = full_path = 0
    for path in files:
        loaded, mech = load_and_compile(path)
        fast = actuation_warnings(loaded, mech, over_only=True)
        truth = actuation_warnings(loaded, mech, rank=rank_mobility(mech), over_only=True)
        assert fast == truth, path
        if len(mech.q_actuated) <= mech.gruebler_mobility:
            shortcut += 1
        else:
            full_path += 1
    assert shortcut >= 10 and full_path >= 3  # both branches exercised (over-actuated, overconstrained)
