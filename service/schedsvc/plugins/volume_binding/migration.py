"""CSI migration of a bound in-tree PV (kube's tryTranslatePVToCSI, for bound claims only): on a
node whose CSINode lists the PV's plugin as migrated, the PV's node affinity is the one
csi-translation-lib gives it, its zone key renamed to the CSI driver's (or added from the PV's
zone label) and a beta region key renamed to the GA one.

Translation errors are a Filter Error in kube on the nodes migrating the PV's plugin
(translation_error): a regional GCE PD whose zones name no single region, an Azure disk of a
kind other than Managed. An EBS volume ID that does not parse is not modelled (the PV keeps its
own node affinity).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...framework import Rows
from ...framework.snapshot import BoolArray, Snapshot
from ...model import NodeSelectorRequirement, NodeSelectorTerm
from ...model_storage import PersistentVolume
from .matching import affinity_mask

__all__ = ["MIGRATED_PLUGINS", "translated_affinity", "bound_pv_mask", "translation_error"]

GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"

# the in-tree source -> (its plugin, the CSI driver's zone key; None: affinity left alone).
# azureFile and vsphereVolume are migratable but not in the scheduler's list.
MIGRATED_PLUGINS: dict[str, tuple[str, str | None]] = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "topology.gke.io/zone"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "topology.ebs.csi.aws.com/zone"),
    "cinder": ("kubernetes.io/cinder", "topology.cinder.csi.openstack.org/zone"),
    "azureDisk": ("kubernetes.io/azure-disk", None),
    "portworxVolume": ("kubernetes.io/portworx-volume", None),
}

Terms = tuple[NodeSelectorTerm, ...]


def _values(terms: Terms, key: str) -> list[str]:
    return sorted({v for t in terms for r in t.match_expressions if r.key == key for v in r.values})


def _uses(terms: Terms, key: str) -> bool:
    return any(r.key == key for t in terms for r in t.match_expressions)


def _rename(terms: Terms, old: str, new: str) -> Terms:
    return tuple(
        NodeSelectorTerm(
            tuple(NodeSelectorRequirement(new if r.key == old else r.key, r.operator, r.values)
                  for r in t.match_expressions),
            t.match_fields,
        ) for t in terms
    )


def _labels(pv: PersistentVolume, terms: Terms) -> tuple[str, str]:
    """getTopologyLabel: GA or beta zone and region keys, from the affinity, then the labels."""
    if _uses(terms, GA_ZONE):
        return GA_ZONE, GA_REGION
    if _uses(terms, BETA_ZONE):
        return BETA_ZONE, BETA_REGION
    if GA_ZONE in pv.labels:
        return GA_ZONE, GA_REGION
    if BETA_ZONE in pv.labels:
        return BETA_ZONE, BETA_REGION
    return GA_ZONE, GA_REGION


def translated_affinity(pv: PersistentVolume, csi_key: str) -> Terms | None:
    """translateTopologyFromInTreeToCSI on the PV's node affinity (None: no affinity)."""
    terms: Terms = pv.node_affinity or ()
    zone, region = _labels(pv, terms)
    if _values(terms, zone):
        terms = _rename(terms, zone, csi_key)
    elif zone in pv.labels:
        zones = sorted({z.strip() for z in pv.labels[zone].split("__") if z.strip()})
        if zones:  # none: kube's error, not modelled (the affinity stays)
            req = NodeSelectorRequirement(csi_key, "In", tuple(zones))
            terms = tuple(
                NodeSelectorTerm((*t.match_expressions, req), t.match_fields)
                for t in (terms or (NodeSelectorTerm(),))
            )
    if region == BETA_REGION and _values(terms, region):
        terms = _rename(terms, region, GA_REGION)
    if not terms and pv.node_affinity is None:
        return None
    return terms


def _source_kind(pv: PersistentVolume) -> str:
    if pv.source_kind:
        return pv.source_kind
    d = pv.disk
    for kind, present in (
        ("gcePersistentDisk", d.gce_persistent_disk), ("awsElasticBlockStore",
        d.aws_elastic_block_store), ("cinder", d.cinder), ("azureDisk", d.azure_disk),
        ("portworxVolume", d.portworx_volume),
    ):
        if present is not None:
            return kind
    return ""


def _gce_region_error(pv: PersistentVolume) -> str:
    """csi-translation-lib's gceGetRegionFromZones for a regional PD ("": zonal, or fine)."""
    zones = (pv.labels.get(BETA_ZONE) or pv.labels.get(GA_ZONE) or "").split("__")
    if len(zones) < 2:
        return ""
    regions: set[str] = set()
    for z in zones:
        parts = z.split("-")
        if len(parts) != 3:
            return f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {z}"
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:  # Go's %v of a sets.String: a map, keys sorted
        got = " ".join(f"{r}:{{}}" for r in sorted(regions))
        return f"multiple or no regions gotten from zones, got: map[{got}]"
    return ""


def translation_error(pv: PersistentVolume) -> str:
    """kube's error translating the PV to CSI on a node migrating its plugin ("": none)."""
    kind = _source_kind(pv)
    if kind == "gcePersistentDisk" and (err := _gce_region_error(pv)):
        return f"could not translate pv: failed to get region from zones: {err}"
    az = pv.disk.azure_disk
    if kind == "azureDisk" and az is not None and az.kind and az.kind.lower() != "managed":
        return f"could not translate pv: kind({az.kind}) is not supported in csi migration"
    return ""


def migrated_rows(pv: PersistentVolume, snap: Snapshot, rows: Rows) -> BoolArray:
    """The rows whose CSINode lists the PV's plugin as migrated."""
    plugin = MIGRATED_PLUGINS.get(_source_kind(pv), ("", None))[0]
    migrated = [snap.index[name] for name, csi_node in snap.storage.csi_nodes.items()
                if plugin and name in snap.index and plugin in csi_node.migrated_plugins()]
    out: BoolArray = np.isin(rows, np.asarray(migrated, dtype=np.intp))
    return out


def bound_pv_mask(pv: PersistentVolume, snap: Snapshot, rows: Rows) -> BoolArray:
    """A bound PV's node affinity on each row, translated on the rows whose CSINode lists the
    PV's plugin as migrated."""
    base = affinity_mask(pv, snap, rows)
    csi_key = MIGRATED_PLUGINS.get(_source_kind(pv), ("", None))[1]
    if csi_key is None:
        return base
    on = migrated_rows(pv, snap, rows)
    if not on.any():
        return base
    moved = dataclasses.replace(pv, node_affinity=translated_affinity(pv, csi_key))
    out: BoolArray = np.where(on, affinity_mask(moved, snap, rows), base)
    return out
