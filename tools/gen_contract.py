"""The one step that turns `protos/` into the generated contract (`schedsvc/v1/*_pb2*.py{,i}`).

Both `make gen` (into `service/`, for the dev tree) and the package build (`setup.py`, into the
wheel's build directory) call `generate`, so there is one set of protoc flags: `-I protos`, so
the generated import paths match the proto package. The generated code is never committed and
never edited; this module needs only the standard library and grpcio-tools, because the build
runs it in pip's isolated build environment.

    python -m tools.gen_contract [OUT]      # OUT defaults to service/
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

__all__ = ["PACKAGE", "PROTOS", "generate", "main"]

REPO = Path(__file__).resolve().parent.parent
PROTOS = REPO / "protos"
PACKAGE = Path("schedsvc") / "v1"


class GenerationError(RuntimeError):
    """protoc refused the protos (its own message is on stderr)."""


def _proto_files(protos: Path) -> list[Path]:
    files = sorted((protos / PACKAGE).glob("*.proto"))
    if not files:
        raise GenerationError(f"no .proto files under {protos / PACKAGE}")
    return files


def generate(out: Path, protos: Path = PROTOS) -> list[Path]:
    """Write the contract under `out/schedsvc/v1/` (replacing whatever was there, so nothing
    stale survives) and return the files written."""
    from grpc_tools import protoc  # a build requirement, not a runtime one

    target = out / PACKAGE
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    well_known = resources.files("grpc_tools") / "_proto"  # google/protobuf/timestamp.proto
    argv = [
        "grpc_tools.protoc", f"-I{protos}", f"-I{well_known}",
        f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}",
        *(str(f) for f in _proto_files(protos)),
    ]
    if protoc.main(argv) != 0:
        raise GenerationError(f"protoc failed: {' '.join(argv)}")
    (target / "__init__.py").touch()
    return sorted(p for p in target.iterdir() if p.is_file())


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.gen_contract", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?", type=Path, default=REPO / "service",
                   help="directory that receives schedsvc/v1/ (default: service/)")
    args = p.parse_args(argv)
    try:
        written = generate(args.out)
    except GenerationError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"generated {len(written)} files under {args.out / PACKAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
