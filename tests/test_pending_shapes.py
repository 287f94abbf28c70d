"""pending_with_shapes (engine/simulate/on_fork.py): the pods a drain or scale_up re-places,
pending, equal ones sharing one shape token (batching memoizes a signature by it). Two pods
share a token exactly when the pods, with uid, name, node and nomination cleared, compare
equal (`==`, the reference written out here: a map's entries in any order), whether or not
they share field objects, and whatever tokens they came with (a pod a drain moved earlier in
the step keeps its token)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from schedsvc.engine.simulate.on_fork import pending_with_shapes
from schedsvc.model import Pod
from tests.builders.domain import pod

SHARED_LABELS = {"app": "a", "tier": "web"}


def _blank(p: Pod) -> Pod:
    return replace(p, uid="", name="", node_name="", nominated_node_name="")


OWN_TOKENS = (None, object(), object())


@st.composite
def bound_pods(draw: st.DrawFn) -> list[Pod]:
    out = []
    for i in range(draw(st.integers(0, 12))):
        labels = draw(st.sampled_from([
            {"app": "a"}, {"app": "b"}, {"app": "a", "tier": "web"}, {"tier": "web", "app": "a"},
        ]))
        selector = draw(st.sampled_from([
            {}, {"disk": "ssd", "zone": "a"}, {"zone": "a", "disk": "ssd"}, {"zone": "a"},
        ]))
        out.append(pod(
            f"p{i}", cpu=draw(st.sampled_from([100, 200])), labels=labels,
            priority=draw(st.sampled_from([0, 5])),
            node_name=draw(st.sampled_from(["n0", "n1"])),
            nominated_node_name=draw(st.sampled_from(["", "n2"])),
            namespace=draw(st.sampled_from(["default", "web"])),
            shape=draw(st.sampled_from(OWN_TOKENS)), node_selector=selector,
        ))
    return out


@settings(max_examples=200, deadline=None)
@given(bound_pods())
def test_pods_share_a_token_exactly_when_they_are_equal_but_for_identity_and_place(
    pods: list[Pod],
) -> None:
    out = pending_with_shapes(pods)
    assert [(p.uid, p.node_name, p.nominated_node_name) for p in out] == [
        (p.uid, "", "") for p in pods
    ]
    for i, a in enumerate(pods):
        for j, b in enumerate(pods):
            assert (out[i].shape is out[j].shape) == (_blank(a) == _blank(b))


def test_shared_field_objects_and_own_tokens() -> None:
    """Pods sharing their labels object are keyed once; labels in another order are the same
    shape (equal maps); a pod's own token is not kept: d (token T) and e (no token), equal,
    share a fresh one, and f (token T too, another cpu) gets another."""
    a = pod("a", labels=SHARED_LABELS, node_name="n0")
    b = pod("b", labels=SHARED_LABELS, node_name="n1")
    c = pod("c", labels={"tier": "web", "app": "a"}, node_name="n0")
    token = object()
    d = replace(pod("d", cpu=999), shape=token)
    e = pod("e", cpu=999, node_name="n1")
    f = replace(pod("f", cpu=998), shape=token)
    out = pending_with_shapes([a, b, c, d, e, f])
    assert out[0].shape is out[1].shape is out[2].shape
    assert out[3].shape is out[4].shape
    assert out[3].shape is not token and out[5].shape is not token
    assert out[5].shape is not out[3].shape
