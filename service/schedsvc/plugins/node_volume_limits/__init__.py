"""NodeVolumeLimits (kube's nodevolumelimits): CSI attach limits per node, split as kube's
csi.go (plugin.py), its in-tree translation (translation.py) and what it counts of a pod
(attachable.py); node_columns.py holds the CSINodes as columns over node rows."""

from .plugin import ERR_REASON_MAX_VOLUME_COUNT, NAME, NodeVolumeLimits, driver_not_installed, new

__all__ = ["NAME", "ERR_REASON_MAX_VOLUME_COUNT", "NodeVolumeLimits", "driver_not_installed", "new"]
