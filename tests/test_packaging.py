"""The package and the oracle as a user builds them: a wheel holds the generated contract, the
sdist holds what regenerates it, the dev tree's copy is what the build would make, and the
oracle README's build commands are the ones `make` runs. (The wheel installed into a fresh venv
and served is tools/wheel_smoke.py, which .ci/run runs: it needs PyPI.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tools.gen_contract import PACKAGE, generate

REPO = Path(__file__).resolve().parent.parent
CONTRACT = {"__init__.py", "schedule_pb2.py", "schedule_pb2.pyi", "schedule_pb2_grpc.py"}
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".stamp", "bin")


def _docker_builder_copies() -> list[str]:
    """The sources of the builder stage's COPY lines (what `docker build` hands to pip)."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text())
    stage = text[text.index(" AS builder"):text.index("\nFROM ", text.index(" AS builder"))]
    sources: list[str] = []
    for line in stage.splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not words[1].startswith("--"):
            sources += words[1:-1]
    return sources


def _copy_tree(sources: list[str], dest: Path) -> Path:
    """The listed repository paths under `dest`, without the dev tree's generated contract."""
    for src in sources:
        path = REPO / src
        if path.is_dir():
            shutil.copytree(path, dest / src, ignore=SKIP)
        else:
            (dest / src).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / src)
    shutil.rmtree(dest / "service" / PACKAGE, ignore_errors=True)
    return dest


def _wheel(source: Path, out: Path) -> zipfile.ZipFile:
    """`pip wheel` of `source` with this venv's setuptools and grpcio-tools (no network)."""
    res = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    (wheel,) = out.glob("schedsvc-*.whl")
    return zipfile.ZipFile(wheel)


def _assert_wheel_is_whole(wheel: zipfile.ZipFile, fresh: Path) -> None:
    names = set(wheel.namelist())
    contract = {Path(n).name for n in names if n.startswith(f"{PACKAGE.as_posix()}/")}
    assert contract == CONTRACT
    for name in CONTRACT - {"__init__.py"}:  # byte for byte what the generator makes
        assert wheel.read(f"{PACKAGE.as_posix()}/{name}") == (fresh / PACKAGE / name).read_bytes()
    assert "schedsvc_client/workloads/default.yaml" in names
    assert {"schedsvc/cli.py", "schedsvc_client/client.py"} <= names
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    scripts = wheel.read(entry).decode()
    assert "schedsvc = schedsvc.cli:main" in scripts
    assert "schedsvc-load = schedsvc_client.load:main" in scripts


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The contract generated from protos/ now, by the step every build runs."""
    out = tmp_path_factory.mktemp("fresh")
    generate(out)
    return out


def test_the_dev_tree_contract_is_what_the_build_generates(fresh: Path) -> None:
    for name in CONTRACT:
        dev = REPO / "service" / PACKAGE / name
        assert dev.read_bytes() == (fresh / PACKAGE / name).read_bytes(), \
            f"{dev} is stale: run `make gen`"


def test_the_dockerfile_builder_copies_enough_to_build_a_wheel_with_the_contract(
    tmp_path: Path, fresh: Path
) -> None:
    sources = _docker_builder_copies()
    assert {"setup.py", "protos/", "tools/gen_contract.py", "service/"} <= set(sources)
    with _wheel(_copy_tree(sources, tmp_path / "src"), tmp_path / "dist") as wheel:
        _assert_wheel_is_whole(wheel, fresh)


def test_the_sdist_regenerates_the_contract_and_ships_none(tmp_path: Path, fresh: Path) -> None:
    src = _copy_tree([p.name for p in REPO.iterdir() if p.name in (
        "pyproject.toml", "setup.py", "MANIFEST.in", "protos", "tools", "service", "clients")],
        tmp_path / "src")
    shutil.copytree(REPO / "service" / PACKAGE, src / "service" / PACKAGE)  # as a dev tree has
    res = subprocess.run(
        [sys.executable, "-c", "from setuptools import build_meta as b; "
         f"print(b.build_sdist({str(tmp_path / 'sdist')!r}))"],
        cwd=src, capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    (sdist,) = (tmp_path / "sdist").glob("schedsvc-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        tar.extractall(tmp_path / "unpacked", filter="data")
    assert {"setup.py", "MANIFEST.in", "protos/schedsvc/v1/schedule.proto",
            "tools/gen_contract.py"} <= names
    assert not any(n.startswith(f"service/{PACKAGE.as_posix()}") for n in names)
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    with _wheel(unpacked, tmp_path / "dist") as wheel:
        _assert_wheel_is_whole(wheel, fresh)


def _readme_build_commands() -> list[str]:
    text = (REPO / "tools/kube-oracle/README.md").read_text()
    block = text[text.index("## Build"):]
    block = block[block.index("```sh\n") + 6:block.index("```\n", block.index("```sh\n") + 6)]
    return [" ".join(ln.split()) for ln in block.splitlines() if ln and not ln.startswith("#")]


def test_the_oracle_readme_build_commands_are_what_make_runs() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "ORACLE_GOTOOLCHAIN")}
    ran = []
    for target in ("oracle", "oracle-test"):
        res = subprocess.run([make, "-s", "-n", "--no-print-directory", target], cwd=REPO,
                             env=env, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        ran += [" ".join(ln.split()) for ln in res.stdout.splitlines() if ln.strip()]
    assert ran == _readme_build_commands()
    assert "make oracle oracle-test" in (REPO / ".ci/run").read_text()
