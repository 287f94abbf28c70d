"""`python -m schedsvc.healthcheck`: exit 0 when the server's gRPC health service says SERVING.

The container's HEALTHCHECK runs this, so the image needs no grpc_health_probe binary. The
address defaults to the server's own (SCHEDSVC_ADDRESS), with a wildcard host replaced by
loopback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

__all__ = ["check", "main"]

SERVICE = "schedsvc.v1.ScheduleService"


def _default_address() -> str:
    host, _, port = os.environ.get("SCHEDSVC_ADDRESS", "127.0.0.1:50051").rpartition(":")
    if host in ("", "0.0.0.0", "[::]", "::"):
        host = "127.0.0.1"
    return f"{host}:{port}"


def check(address: str, service: str = SERVICE, timeout: float = 3.0) -> str:
    """The serving status name (SERVING, NOT_SERVING, ...) or the RPC error's code name."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            resp = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as exc:
            return str(exc.code().name)  # the error is also the Call
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m schedsvc.healthcheck", description=__doc__)
    p.add_argument("--address", default=_default_address(), help="HOST:PORT of the server")
    p.add_argument("--service", default=SERVICE, help="service name to ask about")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds")
    args = p.parse_args(argv)
    status = check(args.address, args.service, args.timeout)
    print(status)
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
