"""Compilation: units to SI, shape shortcuts to mass properties (closed forms of uniform
bodies), spanning tree and loops, DH expansion conventions. Exact arithmetic up to rounding,
so tolerances are 1e-12 relative."""

import numpy as np
import pytest
from kin_helpers import mech_from_yaml

SHAPES = """
name: shapes
kind: {kind}
units: {{length: mm, angle: deg}}
links:
  ground: {{frames: {{O: {origin}}}}}
  rod: {{shape: {{type: rod, between: [A, B], mass: 2.0}}, frames: {{A: {a}, B: {b}}}}}
  box: {{shape: {{type: box, size: {size}, mass: 3.0}}, frames: {{O: {origin}}}}}
  disk: {{shape: {{type: disk, radius: 100, height: 20, mass: 4.0}}, frames: {{O: {origin}}}}}
joints:
  j1: {{type: revolute, parent: ground.O, child: rod.A}}
  j2: {{type: revolute, parent: ground.O, child: box.O}}
  j3: {{type: revolute, parent: ground.O, child: disk.O}}
base: ground
"""


def test_planar_shapes_in_si():
    m = mech_from_yaml(SHAPES.format(kind="planar", origin="[0, 0]", a="[0, 0]", b="[300, 400]",
                                     size="[200, 100]"))
    rod, box, disk = (m.link_index(n) for n in ("rod", "box", "disk"))
    np.testing.assert_allclose(m.link_cg[rod], [0.15, 0.2, 0.0], rtol=1e-12)  # midpoint, in m
    assert m.link_inertia[rod] == pytest.approx(np.diag([0, 0, 2.0 * 0.5**2 / 12]), rel=1e-12)  # m L^2 / 12
    assert m.link_inertia[box][2, 2] == pytest.approx(3.0 * (0.2**2 + 0.1**2) / 12, rel=1e-12)
    assert m.link_inertia[disk][2, 2] == pytest.approx(4.0 * 0.1**2 / 2, rel=1e-12)
    assert np.count_nonzero(m.link_inertia[[rod, box, disk]]) == 3  # planar links keep only Izz


def test_spatial_rod_inertia_is_perpendicular_to_its_axis():
    m = mech_from_yaml(SHAPES.format(kind="spatial", origin="[0, 0, 0]", a="[0, 0, 0]", b="[0, 0, 500]",
                                     size="[200, 100, 50]"))
    I_rod = m.link_inertia[m.link_index("rod")]
    np.testing.assert_allclose(I_rod, np.diag([1, 1, 0]) * 2.0 * 0.5**2 / 12, rtol=1e-12, atol=1e-15)
    I_disk = m.link_inertia[m.link_index("disk")]
    np.testing.assert_allclose(np.diag(I_disk), [4.0 * (3 * 0.01 + 0.0004) / 12] * 2 + [4.0 * 0.01 / 2], rtol=1e-12)


def test_tree_and_loops_of_a_fourbar():
    from kin_helpers import fourbar_yaml

    m = mech_from_yaml(fourbar_yaml(4, 1, 3.5, 3))
    assert m.n_loops == 1 and m.n_constraints == 3 and m.gruebler_mobility == 1
    tree = set(m.link_tree_joint[1:])
    assert len(tree) == 3 and m.loop_joint[0] not in tree  # every joint is in the tree or closes a loop
    assert list(m.link_order[:1]) == [0]
