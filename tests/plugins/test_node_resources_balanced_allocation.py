"""NodeResourcesBalancedAllocation: its args (defaults, each error naming its field) and its sign
for batching. The scores of each release are in test_node_resources_balanced_allocation_score.py,
the scalar reference in test_node_resources_balanced_allocation_reference.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedsvc.errors import ConfigError
from schedsvc.framework.podinfo import pod_info
from schedsvc.plugins import node_resources_balanced_allocation as ba
from tests.builders import pod_requesting

# ---- args ------------------------------------------------------------------------------------

def test_default_args() -> None:
    args = ba.NodeResourcesBalancedAllocationArgs.parse(None)
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]


ARG_ERRORS = [
    pytest.param({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight",
                 id="a weight other than one is rejected"),
    pytest.param({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, "resources[1].name",
                 id="a duplicate resource is rejected"),
    pytest.param({"resources": [{"weight": 1}]}, "resources[0].name",
                 id="a resource without a name is rejected"),
    pytest.param({"resource": []}, "args.resource", id="an unknown key is rejected"),
    pytest.param({"resources": "cpu"}, "args.resources", id="resources must be a list"),
]


@pytest.mark.parametrize("args, field", ARG_ERRORS)
def test_args_errors(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as exc:
        ba.new(args)
    assert field in exc.value.field
    assert exc.value.field.startswith("pluginConfig[NodeResourcesBalancedAllocation].args")


def test_sign_reads_only_the_configured_requests() -> None:
    plugin = ba.new(None)
    a = pod_info(pod_requesting(**{"cpu": 100, "memory": 5}))
    b = pod_info(pod_requesting(**{"cpu": 100, "memory": 5}, containers=2))
    c = pod_info(pod_requesting(**{"cpu": 100, "memory": 6}))
    assert plugin.sign(a) == plugin.sign(b)  # no non-zero defaults in this plugin
    assert plugin.sign(a) != plugin.sign(c)
