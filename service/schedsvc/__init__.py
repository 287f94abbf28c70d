"""schedsvc: kube-scheduler v1.35 placement decisions as a gRPC service."""

__version__ = "0.1.0"
