"""schedsvc: kube-scheduler v1.37.2 placement decisions (v1.35.4 under --emulated-version=1.35)
as a gRPC service."""

__version__ = "0.1.0"
