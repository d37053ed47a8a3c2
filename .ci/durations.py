"""tests/durations.tsv from the output of ``pytest --durations=0`` (read on stdin).

Each ``12.34s call     tests/x.py::test_y`` line gives the call phase of one test; the file keeps
those of at least ``--floor`` seconds, slowest first, with a header that says how it was made.
tests/helpers/tiers.py marks the tests at or over its threshold ``slow``.

    make durations        # runs the whole suite once with --durations=0 and writes the file
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

LINE = re.compile(r"^\s*([0-9.]+)s\s+call\s+(\S+)\s*$")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=Path("tests/durations.tsv"))
    parser.add_argument("--floor", type=float, default=1.0, help="leave out faster tests (seconds)")
    args = parser.parse_args()
    times: dict[str, float] = {}
    for line in sys.stdin:
        m = LINE.match(line)
        if m:
            times[m.group(2)] = float(m.group(1))
    if not times:
        print("durations: no 'Ns call node' lines on stdin (run pytest with --durations=0)", file=sys.stderr)
        return 1
    kept = sorted(((s, n) for n, s in times.items() if s >= args.floor), key=lambda t: (-t[0], t[1]))
    header = [
        "# seconds<TAB>test: the call phase of each test of a whole-suite run (make durations);",
        "# tests/helpers/tiers.py marks those at or over SLOW_SECONDS as slow",
    ]
    args.output.write_text("\n".join([*header, *(f"{s:.2f}\t{n}" for s, n in kept)]) + "\n", encoding="utf-8")
    print(f"durations: {len(kept)} tests of at least {args.floor} s in {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
