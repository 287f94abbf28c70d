"""Node-selector matching kernels, vectorized over the snapshot's label columns.

kube parses a `v1.NodeSelector` once (component-helpers `nodeaffinity`) and matches it node by
node. Here a selector is compiled once per pod into plain requirement objects, and each
requirement becomes a boolean mask over a block of rows: a table over the label column's
distinct values (or over just the values the requirement names), gathered through the column's
interned ids. No per-node Python.

Semantics kept from kube:
- a term with neither matchExpressions nor matchFields matches nothing (and is dropped);
- a term that fails to parse (bad operator, wrong value count, Gt/Lt value not an int64, invalid
  label key or value) never matches, but does not stop the other terms (LazyErrorNodeSelector);
- Gt/Lt read the node's label with Go's strconv.ParseInt(s, 10, 64): a label that does not parse
  fails the requirement;
- matchFields knows only the node's `metadata.name` (any other key reads as ""), operators In and
  NotIn, exactly one value each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..framework import Rows
from ..framework.snapshot import BoolArray, IntArray, LabelColumn, Snapshot
from ..model import (
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from ..names import is_qualified_name, is_valid_label_value

__all__ = [
    "OBJECT_NAME_FIELD",
    "SelectorParseError",
    "parse_go_int64",
    "LabelRequirement",
    "FieldRequirement",
    "CompiledTerm",
    "NodeSelector",
    "WeightedTerm",
    "RequiredNodeAffinity",
    "is_empty_term",
    "compile_term",
    "compile_node_selector",
    "compile_preferred_terms",
    "required_node_affinity",
    "label_requirement_mask",
    "field_requirement_mask",
    "term_mask",
    "label_set_mask",
    "weighted_terms_score",
]

OBJECT_NAME_FIELD = "metadata.name"

_LABEL_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})
_FIELD_OPS = frozenset({"In", "NotIn"})
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_GO_INT_RE = re.compile(r"[+-]?[0-9]+")


class SelectorParseError(ValueError):
    """A node selector term kube's parser rejects (kube: the term's parseErrs)."""


# ---- Go/apimachinery parsing rules ---------------------------------------------------------
def parse_go_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, ASCII digits only, int64 range."""
    if not _GO_INT_RE.fullmatch(text):
        return None
    v = int(text)
    if v < _INT64_MIN or v > _INT64_MAX:
        return None
    return v


# ---- compiled forms ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """labels.Requirement: `number` is the parsed Gt/Lt operand."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    number: int = 0


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One matchFields entry: `key` (In: equal, NotIn: not equal) `value`."""

    key: str
    operator: str
    value: str


@dataclass(frozen=True, slots=True)
class CompiledTerm:
    """A NodeSelectorTerm that parsed: its label and field requirements, all ANDed."""

    labels: tuple[LabelRequirement, ...]
    fields: tuple[FieldRequirement, ...]


def _label_requirement(r: NodeSelectorRequirement) -> LabelRequirement:
    """labels.NewRequirement's checks, as nodeSelectorRequirementsAsSelector calls it."""
    op = r.operator
    vals = tuple(r.values)
    if op not in _LABEL_OPS:
        raise SelectorParseError(f"operator {op!r} not supported")
    if not is_qualified_name(r.key):
        raise SelectorParseError(f"invalid label key {r.key!r}")
    number = 0
    if op in ("In", "NotIn"):
        if not vals:
            raise SelectorParseError("for 'in', 'notin' operators, values set can't be empty")
    elif op in ("Exists", "DoesNotExist"):
        if vals:
            raise SelectorParseError("values set must be empty for exists and does not exist")
    else:  # Gt, Lt
        if len(vals) != 1:
            raise SelectorParseError("for 'Gt', 'Lt' operators, exactly one value is required")
        parsed = parse_go_int64(vals[0])
        if parsed is None:
            raise SelectorParseError("for 'Gt', 'Lt' operators, the value must be an integer")
        number = parsed
    for v in vals:
        if not is_valid_label_value(v):
            raise SelectorParseError(f"invalid label value {v!r}")
    return LabelRequirement(key=r.key, operator=op, values=vals, number=number)


def _field_requirement(r: NodeSelectorRequirement) -> FieldRequirement:
    """nodeSelectorRequirementsAsFieldSelector's checks."""
    if r.operator not in _FIELD_OPS:
        raise SelectorParseError(f"field operator {r.operator!r} not supported")
    if len(r.values) != 1:
        raise SelectorParseError("must have one element")
    return FieldRequirement(key=r.key, operator=r.operator, value=r.values[0])


def is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


def compile_term(term: NodeSelectorTerm) -> CompiledTerm:
    """Parse one non-empty term; raises SelectorParseError listing kube's first parse error."""
    labels = tuple(_label_requirement(r) for r in term.match_expressions)
    fields = tuple(_field_requirement(r) for r in term.match_fields)
    return CompiledTerm(labels=labels, fields=fields)


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A v1.NodeSelector: its terms ORed. Empty and unparsable terms match nothing."""

    terms: tuple[CompiledTerm, ...]
    errors: tuple[str, ...] = ()

    def mask(self, snap: Snapshot, rows: Rows) -> BoolArray:
        out = np.zeros(len(rows), dtype=np.bool_)
        for t in self.terms:
            out |= term_mask(t, snap, rows)
        return out


def compile_node_selector(terms: Iterable[NodeSelectorTerm]) -> NodeSelector:
    """NewLazyErrorNodeSelector: keep the parsable terms, remember the errors of the others."""
    compiled: list[CompiledTerm] = []
    errors: list[str] = []
    for i, term in enumerate(terms):
        if is_empty_term(term):
            continue
        try:
            compiled.append(compile_term(term))
        except SelectorParseError as e:
            errors.append(f"nodeSelectorTerms[{i}]: {e}")
    return NodeSelector(terms=tuple(compiled), errors=tuple(errors))


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: CompiledTerm


def compile_preferred_terms(
    terms: Iterable[PreferredSchedulingTerm],
) -> tuple[tuple[WeightedTerm, ...], tuple[str, ...]]:
    """NewPreferredSchedulingTerms: weight-0 and empty terms are skipped.

    Returns the parsed terms and the parse errors of the others.
    """
    out: list[WeightedTerm] = []
    errors: list[str] = []
    for i, t in enumerate(terms):
        if t.weight == 0 or is_empty_term(t.preference):
            continue
        try:
            out.append(WeightedTerm(weight=t.weight, term=compile_term(t.preference)))
        except SelectorParseError as e:
            errors.append(f"[{i}]: {e}")
    return tuple(out), tuple(errors)


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """kube's nodeaffinity.RequiredNodeAffinity: pod.spec.nodeSelector AND required affinity."""

    node_selector: tuple[tuple[str, str], ...]  # sorted; empty = no nodeSelector
    affinity: NodeSelector | None  # None = no required node affinity

    def mask(self, snap: Snapshot, rows: Rows) -> BoolArray:
        out = label_set_mask(self.node_selector, snap, rows)
        if self.affinity is not None:
            out &= self.affinity.mask(snap, rows)
        return out


def required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    """GetRequiredNodeAffinity(pod)."""
    aff = pod.affinity.node_affinity if pod.affinity is not None else None
    required = aff.required if aff is not None else None
    return RequiredNodeAffinity(
        node_selector=tuple(sorted(pod.node_selector.items())),
        affinity=compile_node_selector(required) if required is not None else None,
    )


# ---- kernels -------------------------------------------------------------------------------
def _gather(col: LabelColumn, table: BoolArray, absent: bool, rows: Rows) -> BoolArray:
    """table[i] for value id i, `absent` where the row has no such label."""
    full = np.append(table, absent)  # id -1 reads the last entry
    out: BoolArray = full[col.ids[rows]]
    return out


def _values_table(col: LabelColumn, values: Sequence[str]) -> BoolArray:
    table = np.zeros(len(col.vocab), dtype=np.bool_)
    for v in values:
        i = col.index.get(v)
        if i is not None:
            table[i] = True
    return table


def label_requirement_mask(req: LabelRequirement, snap: Snapshot, rows: Rows) -> BoolArray:
    """labels.Requirement.Matches for each row's node labels."""
    op = req.operator
    col = snap.labels.get(req.key)
    if col is None:  # no node has the key: every row reads "absent"
        return np.full(len(rows), op in ("NotIn", "DoesNotExist"), dtype=np.bool_)
    if op == "In":
        return _gather(col, _values_table(col, req.values), False, rows)
    if op == "NotIn":
        return _gather(col, ~_values_table(col, req.values), True, rows)
    if op == "Exists":
        return col.ids[rows] >= 0
    if op == "DoesNotExist":
        return col.ids[rows] < 0
    if op in ("Gt", "Lt"):
        n = req.number
        gt = op == "Gt"

        def cmp(value: str) -> bool:
            v = parse_go_int64(value)
            if v is None:
                return False
            return v > n if gt else v < n

        table = np.fromiter((cmp(v) for v in col.vocab), dtype=np.bool_, count=len(col.vocab))
        return _gather(col, table, False, rows)
    return np.zeros(len(rows), dtype=np.bool_)


def field_requirement_mask(req: FieldRequirement, snap: Snapshot, rows: Rows) -> BoolArray:
    """fields.OneTermEqualSelector / OneTermNotEqualSelector over the node's fields."""
    if req.key == OBJECT_NAME_FIELD:
        row = snap.index.get(req.value)
        equal = rows == (row if row is not None else -1)
    else:  # fields.Set.Get of an unknown field is ""
        equal = np.full(len(rows), req.value == "", dtype=np.bool_)
    out: BoolArray = equal if req.operator == "In" else ~equal
    return out


def term_mask(term: CompiledTerm, snap: Snapshot, rows: Rows) -> BoolArray:
    """A parsed term: every label and field requirement holds."""
    out = np.ones(len(rows), dtype=np.bool_)
    for r in term.labels:
        out &= label_requirement_mask(r, snap, rows)
    for f in term.fields:
        out &= field_requirement_mask(f, snap, rows)
    return out


def label_set_mask(pairs: Iterable[tuple[str, str]], snap: Snapshot, rows: Rows) -> BoolArray:
    """labels.SelectorFromSet: each key present with exactly that value."""
    out = np.ones(len(rows), dtype=np.bool_)
    for key, value in pairs:
        col = snap.labels.get(key)
        vid = col.index.get(value) if col is not None else None
        if col is None or vid is None:
            return np.zeros(len(rows), dtype=np.bool_)
        out &= col.ids[rows] == vid
    return out


def weighted_terms_score(
    terms: Sequence[WeightedTerm], snap: Snapshot, rows: Rows
) -> IntArray:
    """PreferredSchedulingTerms.Score: the sum of the weights of the matching terms."""
    out = np.zeros(len(rows), dtype=np.int64)
    for t in terms:
        out += np.where(term_mask(t.term, snap, rows), np.int64(t.weight), np.int64(0))
    return out

