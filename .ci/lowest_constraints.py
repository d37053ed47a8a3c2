"""Print pip constraints that pin every direct dependency of pyproject.toml to its lowest allowed
version (``name>=X`` -> ``name==X``), for the core dependencies and the extras named on the
command line: the lowest-direct resolution, with pip (which sees the CPU torch wheel that the
set-up installs first; see the Makefile). A requirement without a lower bound is left out.
torch is left out too: its lowest allowed release on the package index is a CUDA build of
several GB, so the lowest job runs the CPU wheel the Makefile pins.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: tomli is a dependency of the package there
    import tomli as tomllib

KEEP = {"torch"}


def lowest(requirements: list[str]) -> list[str]:
    pins = []
    for req in requirements:
        spec = req.split(";")[0]
        marker = req.split(";", 1)[1].strip() if ";" in req else ""
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", spec)
        name, versions = m.group(1), m.group(2)
        low = re.search(r">=\s*([0-9][^,\s]*)", versions)
        if low is None or name.lower() in KEEP:
            continue
        pins.append(f"{name}=={low.group(1)}" + (f"; {marker}" if marker else ""))
    return pins


def pins(extras: list[str]) -> list[str]:
    """The constraints of the core dependencies and of ``extras``, each name once."""
    text = Path(__file__).resolve().parents[1].joinpath("pyproject.toml").read_text(encoding="utf-8")
    project = tomllib.loads(text)["project"]
    reqs = list(project["dependencies"])
    for extra in extras:
        reqs += project["optional-dependencies"][extra]
    return list(dict.fromkeys(lowest(reqs)))


def check(extras: list[str]) -> None:
    """Print the installed version of every pinned package; exit 1 where a pin was not honoured."""
    wrong = []
    for pin in pins(extras):
        name, version = pin.split(";")[0].split("==")
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a marker that does not apply here (tomli on Python >= 3.11)
        print(f"lowest: {name}=={installed}")
        padded = [int(p) for p in re.findall(r"\d+", version)]
        got = [int(p) for p in re.findall(r"\d+", installed)][: max(len(padded), 3)]
        if got != (padded + [0] * 3)[: len(got)]:
            wrong.append(f"{name} {installed} (expected {version})")
    if wrong:
        sys.exit("lowest: not the lowest versions: " + ", ".join(wrong))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        check(sys.argv[2:])
    else:
        print("\n".join(pins(sys.argv[1:])))
