"""Build hook only (the metadata is pyproject.toml's): every build generates the contract.

`pip install .`, `pip install git+...`, `pip wheel .` and `python -m build` all run `build_py`,
which here writes `schedsvc/v1/` from `protos/` (tools/gen_contract.py) after the sources are
copied: a wheel's contract is always that build's protoc output of that build's protos, never a
copy of a generated tree. An editable install (`pip install -e .`, `make`) imports from the source
tree, so there the contract is written into `service/`, as `make gen` does.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))  # tools/gen_contract.py, shipped in the sdist (MANIFEST.in)

from tools.gen_contract import generate  # noqa: E402


class BuildPyWithContract(build_py):  # type: ignore[misc]  # setuptools is untyped here
    """build_py, then the generated contract into the same build (or the source tree)."""

    def run(self) -> None:
        super().run()
        out = ROOT / "service" if self.editable_mode else Path(self.build_lib)
        written = generate(out, ROOT / "protos")
        print(f"generated the schedsvc.v1 contract: {len(written)} files under {out}")


setup(cmdclass={"build_py": BuildPyWithContract})
