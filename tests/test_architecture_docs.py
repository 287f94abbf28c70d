"""docs/architecture.md kept true: every file and symbol it names exists, and the recipes for a
plugin, a pod field and an RPC still list what each of them needs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from schedsvc.plugins.registry import in_tree_registry
from schedsvc.server.request_handler import RequestHandler
from schedsvc.server.servicer import ScheduleServicer
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc_client.client import SchedClient

REPO = Path(__file__).resolve().parent.parent
DOC = (REPO / "docs" / "architecture.md").read_text()
# where a path in the doc may be relative to
ROOTS = (REPO, REPO / "service" / "schedsvc", REPO / "service" / "schedsvc" / "engine",
         REPO / "service" / "schedsvc" / "engine" / "batching",
         REPO / "service" / "schedsvc" / "server", REPO / "service" / "schedsvc" / "framework",
         REPO / "service" / "schedsvc" / "engine" / "preemption",
         REPO / "service" / "schedsvc" / "plugins",
         REPO / "service" / "schedsvc" / "plugins" / "pod_topology_spread",
         REPO / "clients" / "schedsvc_client")
PATH = re.compile(r"([\w/.-]+\.(?:py|proto|md))(?::([\w.]+))?")
PLACEHOLDER = re.compile(r"<\w+>")


def _resolve(rel: str) -> Path | None:
    return next((root / rel for root in ROOTS if (root / rel).exists()), None)


def _defines(path: Path, dotted: str) -> bool:
    """Whether `path` defines `dotted` (a function, a class, or a class's method)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(f"{node.name}.{item.name}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
    return dotted in names


def _named() -> list[tuple[str, str | None]]:
    found = [(m.group(1), m.group(2)) for m in PATH.finditer(DOC)]
    return [(p, s) for p, s in found if not PLACEHOLDER.search(p)]


def test_the_doc_names_files() -> None:
    assert len(_named()) > 100


@pytest.mark.parametrize(("rel", "symbol"), sorted(set(_named()), key=str))
def test_every_file_and_symbol_the_doc_names_exists(rel: str, symbol: str | None) -> None:
    path = _resolve(rel)
    assert path is not None, f"docs/architecture.md names {rel}, which does not exist"
    if symbol is not None and path.suffix == ".py":
        assert _defines(path, symbol), f"{rel} defines no {symbol}"


def test_every_registered_plugin_has_its_table_test() -> None:
    registry = in_tree_registry()
    for name in registry.names():
        module = registry.plugin_class(name).__module__.split(".")
        plugin = module[2]  # schedsvc.plugins.<name>[.<part>]
        assert (REPO / "tests" / "plugins" / f"test_{plugin}.py").exists(), name


def test_every_pod_field_is_converted_and_built_for_tests() -> None:
    server = "".join(
        (REPO / "service" / "schedsvc" / "server" / f"{m}.py").read_text()
        for m in ("convert_pod", "convert", "convert_selectors", "validation")
    )
    to_pb = (REPO / "tests" / "builders" / "to_pb.py").read_text()
    for field in pb.Pod.DESCRIPTOR.fields:
        assert field.name in server, f"Pod.{field.name} is not converted (server/convert_pod.py)"
        assert field.name in to_pb, f"Pod.{field.name} is not built (tests/builders/to_pb.py)"


# an RPC -> (its request handler method, its SchedClient method or None: the doc says why)
RPCS = {
    "UpdateSnapshot": ("update_snapshot", "update_snapshot"),
    "Schedule": ("schedule", "schedule"),
    "ScheduleStream": ("schedule_call", "schedule_stream"),
    "Explain": ("explain", "explain"),
    "DeleteCluster": ("delete_cluster", None),
    "Simulate": ("simulate", "simulate"),
}


def test_every_rpc_has_its_handler_servicer_and_client_method() -> None:
    service = pb.DESCRIPTOR.services_by_name["ScheduleService"]
    assert set(service.methods_by_name) == set(RPCS)
    for rpc, (handler, client) in RPCS.items():
        assert callable(getattr(RequestHandler, handler)), rpc
        assert callable(getattr(ScheduleServicer, rpc)), rpc
        if client is None:
            assert f"{rpc} has none" in DOC, rpc
        else:
            assert callable(getattr(SchedClient, client)), rpc
