"""NodeResourcesFit: its args (defaults, accepted forms, each error naming its field) and its sign
for batching. Filter, score and the scalar reference are in test_node_resources_fit_filter.py,
_score.py and _reference.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework.podinfo import pod_info
from schedsvc.model import Container
from schedsvc.plugins import node_resources_fit as fit
from tests.builders import container, pod_requesting, pod_with_containers
from tests.plugins.node_resources_fit_cases import rtcr

# ---- args ------------------------------------------------------------------------------------

def test_default_args() -> None:
    args = fit.NodeResourcesFitArgs.parse(None)
    assert args.strategy == fit.LEAST_ALLOCATED
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]


def test_args_weight_zero_defaults_to_one_and_empty_resources_to_cpu_memory() -> None:
    a = fit.NodeResourcesFitArgs.parse(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}}
    )
    assert [(r.name, r.weight) for r in a.resources] == [("cpu", 1)]
    b = fit.NodeResourcesFitArgs.parse({"scoringStrategy": {"type": "MostAllocated"}})
    assert [(r.name, r.weight) for r in b.resources] == [("cpu", 1), ("memory", 1)]


def test_args_accept_api_version_and_kind() -> None:
    """A kube config's args carry apiVersion and kind; they select nothing, so the args are
    kube's defaults (LeastAllocated over cpu and memory, weight 1 each)."""
    typed = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"}
    args = fit.NodeResourcesFitArgs.parse(typed)
    assert args == fit.NodeResourcesFitArgs.parse({})
    assert args.strategy == "LeastAllocated"
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]
    fit.new(typed)  # and the plugin builds from them


ARG_ERRORS = [
    pytest.param({"bogus": 1}, "args.bogus", id="an unknown key is rejected"),
    pytest.param(
        {"scoringStrategy": {"type": "Fancy"}}, "scoringStrategy.type",
        id="an unknown strategy is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}},
        "scoringStrategy.type",
        id="a strategy without a type is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": 101}]}},
        "scoringStrategy.resources[0].weight",
        id="a weight above 100 is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": -1}]}},
        "scoringStrategy.resources[0].weight",
        id="a negative weight is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": "2"}]}},
        "scoringStrategy.resources[0].weight",
        id="a weight that is not an integer is rejected",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
        "requestedToCapacityRatio.shape",
        id="the ratio strategy without a shape is rejected",
    ),
    pytest.param(
        rtcr([(50, 1), (50, 2)]), "shape[1].utilization",
        id="shape utilizations must increase",
    ),
    pytest.param(
        rtcr([(0, 1), (101, 2)]), "shape[1].utilization",
        id="a shape utilization above 100 is rejected",
    ),
    pytest.param(
        rtcr([(0, 11)]), "shape[0].score", id="a shape score above 10 is rejected",
    ),
    pytest.param(
        {"ignoredResourceGroups": ["example.com/gpu"]}, "ignoredResourceGroups[0]",
        id="an ignored resource group with a slash is rejected",
    ),
    pytest.param(
        {"ignoredResources": ["not a name"]}, "ignoredResources[0]",
        id="an ignored resource that is not a qualified name is rejected",
    ),
    pytest.param(
        {"ignoredResources": "example.com/gpu"}, "ignoredResources",
        id="ignored resources must be a list",
    ),
]


@pytest.mark.parametrize("args, field", ARG_ERRORS)
def test_args_errors(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        fit.new(args)
    assert field in exc.value.field
    assert exc.value.field.startswith("pluginConfig[NodeResourcesFit].args")


# ---- sign ------------------------------------------------------------------------------------

def test_sign_equal_for_equal_requests_and_different_otherwise() -> None:
    plugin = fit.new(None)
    a = pod_info(pod_requesting("a", cpu=100, memory=5))
    b = pod_info(pod_requesting("b", memory=5, cpu=100))
    c = pod_info(pod_requesting("c", cpu=200, memory=5))
    # same requests but one more container without requests: non-zero scoring differs
    d = pod_info(pod_with_containers(container(cpu=100, memory=5), Container(name="x"), uid="d"))
    assert plugin.sign(a) == plugin.sign(b)
    assert plugin.sign(a) != plugin.sign(c)
    assert plugin.sign(a) != plugin.sign(d)
