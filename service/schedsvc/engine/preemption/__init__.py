"""kube's preemption (framework/preemption + DefaultPreemption's PostFilter) for a pod that
fits nowhere: which pods to evict where, as a dry run over the snapshot."""

from __future__ import annotations

from .evaluator import Candidate, PreemptionResult, Victim, potential_rows, preempt

__all__ = ["Candidate", "PreemptionResult", "Victim", "potential_rows", "preempt"]
