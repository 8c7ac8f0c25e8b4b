"""Small helpers for kinematics tests: build compiled mechanisms from YAML text."""

from __future__ import annotations

import textwrap

import numpy as np

from linkcli.compile import compile_mechanism
from linkcli.io.loader import validate_document
from linkcli.io.yaml_source import load_yaml


def mech_from_yaml(text: str, name: str = "<test>"):
    data, smap = load_yaml(textwrap.dedent(text), name)
    return compile_mechanism(validate_document(data, smap, name).model)


def fourbar_yaml(d: float, a: float, b: float, c: float, assembly: str = "{}", kind: str = "planar") -> str:
    """Four-bar: ground d along x, crank a, coupler b, rocker c; crank actuated."""
    z = ", 0" if kind == "spatial" else ""  # the z coordinate of spatial files
    return f"""
    name: test four-bar
    kind: {kind}
    units: {{length: m, angle: rad}}
    links:
      ground: {{frames: {{O2: [0, 0{z}], O4: [{d}, 0{z}]}}}}
      crank: {{frames: {{O2: [0, 0{z}], A: [{a}, 0{z}]}}}}
      coupler: {{frames: {{A: [0, 0{z}], B: [{b}, 0{z}]}}}}
      rocker: {{frames: {{O4: [0, 0{z}], B: [{c}, 0{z}]}}}}
    joints:
      crank_pin: {{type: revolute, parent: ground.O2, child: crank.O2, actuated: true}}
      A: {{type: revolute, parent: crank.A, child: coupler.A}}
      B: {{type: revolute, parent: coupler.B, child: rocker.B}}
      O4: {{type: revolute, parent: rocker.O4, child: ground.O4}}
    base: ground
    effector: coupler.B
    assembly: {assembly}
    """


_OPEN_FOURBAR = """
name: four-bar that cannot close
kind: planar
units: {{length: {unit}, angle: deg}}
links:
  ground: {{frames: {{O2: [0, 0], O4: [{g}, 0]}}}}
  crank: {{frames: {{O2: [0, 0], A: [{a}, 0]}}}}
  coupler: {{frames: {{A: [0, 0], B: [{a}, 0]}}}}
  rocker: {{frames: {{O4: [0, 0], B: [{a}, 0]}}}}
joints:
  crank_pin: {{type: revolute, parent: ground.O2, child: crank.O2, actuated: true}}
  A: {{type: revolute, parent: crank.A, child: coupler.A}}
  B: {{type: revolute, parent: coupler.B, child: rocker.B}}
  O4: {{type: revolute, parent: ground.O4, child: rocker.O4}}
base: ground
effector: coupler.B
assembly: {{crank_pin: 0, A: 0, B: 0, O4: 180}}
"""


def open_fourbar_yaml(unit: str = "m", scale: float = 1.0) -> str:
    """A four-bar that cannot close (ground 10, crank, coupler and rocker 1, in metres times
    ``scale``, written in ``unit``): its loop gap is at least 7 m by the triangle inequality."""
    return _OPEN_FOURBAR.format(unit=unit, g=10 * scale, a=1 * scale)


def fourbar_closed_form(d, a, b, c, theta, sign):
    """Coupler-rocker pin B (n, 2) of a four-bar by circle intersection: A = a(cos, sin),
    B on circles |B - A| = b and |B - O4| = c; ``sign`` +1 picks B left of A->O4."""
    A = np.stack([a * np.cos(theta), a * np.sin(theta)], -1)
    O4 = np.array([d, 0.0])
    v = O4 - A
    L = np.linalg.norm(v, axis=-1)
    x = (b * b - c * c + L * L) / (2 * L)
    h = np.sqrt(b * b - x * x)
    e = v / L[:, None]
    perp = np.stack([-e[:, 1], e[:, 0]], -1)
    return A + x[:, None] * e + sign * h[:, None] * perp


def central_difference(f, x, h=1e-6):
    """Jacobian of f at x by central differences: (len(f(x)), len(x))."""
    x = np.asarray(x, float)
    cols = []
    for k in range(len(x)):
        e = np.zeros_like(x)
        e[k] = h * max(1.0, abs(x[k]))
        cols.append((f(x + e) - f(x - e)) / (2 * e[k]))
    return np.stack(cols, -1)
