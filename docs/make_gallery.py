"""Regenerate every picture of the docs: the joint pictures of docs/format.md and the gallery.

    python docs/make_gallery.py            # all pictures into docs/img/
    python docs/make_gallery.py --joints   # only the joint pictures
    python docs/make_gallery.py --gallery  # only the gallery pictures

Needs the `plot` extra (matplotlib). Gallery pictures are made by the documented command
``linkcli solve FILE --plot docs/img/gallery_<name>.png`` (the effector path over the file's
sweep, drawn on the mechanism); the joint pictures draw, for each joint type, the parent joint
frame (grey) and the child joint frame after the motion ``M(q)`` computed by linkcli's own
kinematics (a one-joint mechanism compiled from YAML), so the pictures show what the code does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMG = REPO / "docs" / "img"
GALLERY = REPO / "mechanisms" / "gallery"

#: joint type -> (variable values in deg or m, caption)
JOINTS = {
    "revolute": ([40.0], "revolute J = 40 deg about z"),
    "prismatic": ([0.6], "prismatic J = 0.6 along z"),
    "cylindrical": ([40.0, 0.6], "cylindrical\nq1 = 40 deg about z, q2 = 0.6 along z"),
    "universal": ([30.0, 40.0], "universal\nq1 = 30 deg about x, then q2 = 40 deg about y'"),
    "spherical": ([40.0, 25.0, 30.0], "spherical (z, then y', then x'')\nq1 = 40, q2 = 25, q3 = 30 deg"),
    "planar": ([0.5, 0.3, 40.0], "planar\nq1 = 0.5 along x, q2 = 0.3 along y, q3 = 40 deg about z"),
}


def _one_joint_mechanism(joint_type: str):
    from linkcli.compile import compile_mechanism
    from linkcli.io.loader import validate_document
    from linkcli.io.yaml_source import load_yaml

    text = textwrap.dedent(f"""
        name: one {joint_type} joint
        kind: spatial
        units: {{length: m, angle: deg}}
        links:
          ground: {{frames: {{P: [0, 0, 0]}}}}
          body: {{frames: {{C: [0, 0, 0]}}}}
        joints:
          J: {{type: {joint_type}, parent: ground.P, child: body.C}}
        base: ground
        """)
    data, smap = load_yaml(text, "<joint>")
    return compile_mechanism(validate_document(data, smap, "<joint>").model)


def joint_pictures() -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from linkcli.core.forward import link_poses

    out = []
    for joint_type, (values, caption) in JOINTS.items():
        mech = _one_joint_mechanism(joint_type)
        q = np.where(mech.q_is_rotation, np.radians(values), values)
        T = link_poses(mech, q)[1]  # the child's joint frame (it sits at the child link origin)
        fig = plt.figure(figsize=(3.0, 3.0), dpi=90)
        ax = fig.add_subplot(projection="3d")
        for frame, style in ((np.eye(4), dict(color="0.6", lw=1.5)), (T, None)):
            o = frame[:3, 3]
            for k, (name, colour) in enumerate(zip("xyz", ("tab:red", "tab:green", "tab:blue"), strict=True)):
                tip = o + 0.8 * frame[:3, k]
                kw = style or dict(color=colour, lw=2.5)
                ax.plot(*zip(o, tip, strict=True), **kw)
                ax.text(*(o + 0.9 * frame[:3, k]), name + ("" if style else "'"), color=kw["color"], fontsize=8)
        ax.set(xlim=(-0.5, 1.2), ylim=(-0.5, 1.2), zlim=(-0.5, 1.2), xticks=[], yticks=[], zticks=[])
        ax.view_init(elev=22, azim=35)
        ax.set_title(caption, fontsize=7)
        path = IMG / f"joint_{joint_type}.png"
        fig.savefig(path)
        plt.close(fig)
        out.append(path)
    return out


def gallery_pictures() -> list[Path]:
    out = []
    for path in sorted(GALLERY.glob("*.yaml")):
        png = IMG / f"gallery_{path.stem}.png"
        cmd = [sys.executable, "-m", "linkcli", "solve", str(path), "--quiet", "--format", "csv",
               "--plot", str(png)]
        subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
        out.append(png)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="Regenerate the pictures of docs/ (joint types and the gallery).")
    ap.add_argument("--joints", action="store_true", help="only the joint pictures")
    ap.add_argument("--gallery", action="store_true", help="only the gallery pictures")
    args = ap.parse_args()
    IMG.mkdir(parents=True, exist_ok=True)
    both = not (args.joints or args.gallery)
    made = (joint_pictures() if args.joints or both else []) + (gallery_pictures() if args.gallery or both else [])
    for p in made:
        print(p.relative_to(REPO))


if __name__ == "__main__":
    main()
