"""The tests' own layout: builders are defined in tests/builders only, and no test module
imports another (what two test modules share lives in a support module), so a builder is
fixed in one place and a test module can be read, moved or deleted on its own."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests import builders

TESTS = Path(__file__).resolve().parent
BUILDERS = TESTS / "builders"

# Each plugin test wraps these with the construction of its own plugin (and its own result
# shape); the wrapper is the test's table driver, not a second builder.
WRAPPED = {"run_filter", "run_score", "Filtered"}
BUILDER_NAMES = set(builders.__all__) - WRAPPED


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)


def _imports(tree: ast.Module, module: str) -> Iterator[str]:
    """Every module `tree` imports, absolute (`from .x import y` in tests.a -> tests.x; a name
    imported from a package may be a module: tests.y)."""
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            yield base
            yield from (f"{base}.{a.name}" for a in node.names)


def imported_test_modules(tree: ast.Module, module: str) -> list[str]:
    """The test modules (`test_*`) that `tree`, the source of `module`, imports."""
    return sorted({m for m in _imports(tree, module) if m.rsplit(".", 1)[-1].startswith("test_")})


def builder_definitions(tree: ast.Module) -> list[str]:
    """Functions, classes and module-level names of `tree` that are named as a builder."""
    names = [
        n.name for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    names += [
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
        if isinstance(t, ast.Name)
    ]
    return sorted(set(names) & BUILDER_NAMES)


def _sources(pattern: str) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(TESTS.rglob(pattern)):
        if BUILDERS not in path.parents:
            yield path, ast.parse(path.read_text(), str(path))


def test_no_test_module_imports_another() -> None:
    found = {
        str(path.relative_to(TESTS)): bad
        for path, tree in _sources("test_*.py")
        if (bad := imported_test_modules(tree, _module_name(path)))
    }
    assert found == {}


def test_builders_are_defined_in_tests_builders_only() -> None:
    found = {
        str(path.relative_to(TESTS)): bad
        for path, tree in _sources("*.py")
        if (bad := builder_definitions(tree))
    }
    assert found == {}


def test_the_checks_see_what_they_forbid() -> None:
    """Each form an import of a test module or a second builder can take is caught."""
    imports = ast.parse(
        "import tests.test_a\nfrom tests.test_b import x\nfrom tests import test_c\n"
        "from .test_d import y\nfrom . import test_e\nfrom tests.support import Servers\n"
    )
    assert imported_test_modules(imports, "tests.plugins.test_z") == [
        "tests.plugins.test_d", "tests.plugins.test_e", "tests.test_a", "tests.test_b",
        "tests.test_c",
    ]
    defs = ast.parse(
        "def make_node(): ...\nclass node: ...\npb_pod = None\n"
        "def test_x():\n    def pod_requesting(): ...\n"
        "def run_filter(): ...\ndef helper(): ...\n"
    )
    assert builder_definitions(defs) == ["make_node", "node", "pb_pod", "pod_requesting"]
