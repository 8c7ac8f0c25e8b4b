"""How long linkcli takes to answer hostile or broken input files (issue 15: "every bad file
answers within 1 s").

Each case is read, parsed and validated in this process (``load_and_compile``, what
``linkcli validate`` does per file, without the interpreter start-up that every command pays);
the reference is the valid four-bar in the same run, so ratios survive a loaded machine. Also
reported: CPU time (less inflated than wall time when other processes share the cores) and
the slowest file of the seeded fuzz corpus of tests/test_fuzz_files.py.

    python benchmarks/bench_bad_files.py            # prints a table and the load average
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from linkcli.cli.common import load_and_compile  # noqa: E402
from linkcli.errors import MechanismFileError  # noqa: E402
from linkcli.io.yaml_source import MAX_BYTES  # noqa: E402


def cases(fourbar: str) -> dict[str, bytes]:
    items = (MAX_BYTES - 20) // 2
    return {
        "fourbar.yaml (valid, reference)": fourbar.encode(),
        "4.8 MB list of 1.6M items (issue 15)": b"name: x\nlist: [" + b"1," * 1_600_000 + b"]\n",
        f"1 MiB list of {items:,} items": b"name: x\nl: [" + b"1," * items + b"]\n",
        "100,000 unknown keys (issue 15)": "".join(f"k{i}: 1\n" for i in range(100_000)).encode(),
        "3,000 unknown keys in a valid file": (fourbar + "".join(f"zz{i}: 1\n" for i in range(3000))).encode(),
        "1 MiB of blank lines": b"\n" * (MAX_BYTES - 10) + b"name: x\n",
        "1 MiB comment": b"# " + b"x" * (MAX_BYTES - 20) + b"\nname: x\n",
        "1 MiB quoted string": b'name: "' + b"x" * (MAX_BYTES - 20) + b'"\n',
        "alias bomb (billion laughs)": b"a: &a [1,1,1,1,1,1,1,1,1]\n" + b"".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n".encode() for p, c in zip("abcdefgh", "bcdefghi", strict=True)),
    }


def measure(path: str) -> tuple[float, float, str]:
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        load_and_compile(path)
        outcome = "valid"
    except MechanismFileError as exc:
        outcome = f"{len(exc.diagnostics) + exc.omitted} problems: {exc.diagnostics[0].message[:50]}"
    return time.perf_counter() - wall, time.process_time() - cpu, outcome


def main() -> None:
    fourbar = (REPO / "mechanisms" / "fourbar.yaml").read_text(encoding="utf-8")
    load_and_compile(REPO / "mechanisms" / "fourbar.yaml")  # imports and caches warm
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in cases(fourbar).items():
            path = os.path.join(tmp, "case.yaml")
            with open(path, "wb") as fh:
                fh.write(data)
            rows.append((name, len(data), *measure(path)))
        sys.path.insert(0, str(REPO / "tests"))
        from test_fuzz_files import cases as fuzz_cases  # the seeded corpus of the test suite

        worst = (0.0, 0.0, "")
        for case_name, text, _, _ in fuzz_cases():
            path = os.path.join(tmp, "fuzz.yaml")
            Path(path).write_text(text, encoding="utf-8")
            wall, cpu, _ = measure(path)
            worst = max(worst, (wall, cpu, case_name))
    reference = rows[0][2]
    print(f"{'case':42s} {'bytes':>10s} {'wall s':>8s} {'cpu s':>7s} {'x four-bar':>10s}  outcome")
    for name, size, wall, cpu, outcome in rows:
        print(f"{name:42s} {size:10,d} {wall:8.3f} {cpu:7.3f} {wall / reference:10.1f}  {outcome}")
    print(f"{'slowest of 120 fuzzed files: ' + worst[2]:42s} {'':10s} {worst[0]:8.3f} {worst[1]:7.3f} "
          f"{worst[0] / reference:10.1f}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
