"""TLS, mutual TLS and bearer tokens, with throwaway certificates made by the openssl CLI."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from schedsvc.config import default_config
from schedsvc.engine.scheduler import Engine
from schedsvc.server.app import Server, ServerOptions
from schedsvc.server.auth import TokenAuthInterceptor
from schedsvc.server.tls import server_credentials
from schedsvc.v1 import schedule_pb2 as pb
from schedsvc.v1 import schedule_pb2_grpc as pb_grpc
from schedsvc_client.client import SchedClient, tls_credentials
from tests.builders import pb_node, pb_pod

WAIT = 30.0
pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI")


def _ssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _ca(d: Path, name: str) -> None:
    _ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
         "-keyout", f"{name}.key", "-out", f"{name}.crt", cwd=d)


def _leaf(d: Path, name: str, ca: str, ext: str) -> None:
    (d / f"{name}.ext").write_text(ext)
    _ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
         "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    _ssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
         "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=d)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server cert for 127.0.0.1/localhost, a client cert, and an untrusted CA+client."""
    d = tmp_path_factory.mktemp("pki")
    _ca(d, "ca")
    _ca(d, "rogue")
    _leaf(d, "server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
          "extendedKeyUsage=serverAuth\n")
    _leaf(d, "client", "ca", "extendedKeyUsage=clientAuth\n")
    _leaf(d, "intruder", "rogue", "extendedKeyUsage=clientAuth\n")
    return d


@pytest.fixture
def start() -> Iterator[object]:
    started: list[Server] = []

    def factory(**options: object) -> Server:
        opts = ServerOptions(address="127.0.0.1:0", grace_seconds=1, **options)  # type: ignore[arg-type]
        server = Server(Engine(default_config(), seed=1), opts).start()
        started.append(server)
        return server

    yield factory
    for s in started:
        s.stop(0)


def _update(channel: grpc.Channel, metadata: tuple[tuple[str, str], ...] = ()) -> int:
    stub = pb_grpc.ScheduleServiceStub(channel)
    resp = stub.UpdateSnapshot(
        pb.UpdateSnapshotRequest(upsert_nodes=[pb_node("n0")]), timeout=10, metadata=metadata
    )
    return int(resp.nodes)


def _code(fn: object) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        fn()  # type: ignore[operator]
    return err.value.code()  # type: ignore[no-any-return]


def _creds(pki: Path, who: str | None = None, ca: str = "ca") -> grpc.ChannelCredentials:
    if who is None:
        return tls_credentials(pki / f"{ca}.crt")
    return tls_credentials(pki / f"{ca}.crt", pki / f"{who}.crt", pki / f"{who}.key")


def test_tls_serves_trusting_clients_and_refuses_plaintext(start, pki: Path) -> None:  # type: ignore[no-untyped-def]
    server = start(credentials=server_credentials(str(pki / "server.crt"),
                                                  str(pki / "server.key")))
    target = f"127.0.0.1:{server.port}"
    with grpc.secure_channel(target, _creds(pki)) as ch:
        assert _update(ch) == 1
    with grpc.insecure_channel(target) as ch:
        assert _code(lambda: _update(ch)) == grpc.StatusCode.UNAVAILABLE
    with grpc.secure_channel(target, _creds(pki, ca="rogue")) as ch:  # server not trusted
        assert _code(lambda: _update(ch)) == grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_requires_a_client_cert_from_the_trusted_ca(start, pki: Path) -> None:  # type: ignore[no-untyped-def]
    server = start(credentials=server_credentials(
        str(pki / "server.crt"), str(pki / "server.key"), str(pki / "ca.crt")))
    target = f"127.0.0.1:{server.port}"
    with grpc.secure_channel(target, _creds(pki, "client")) as ch:
        assert _update(ch) == 1
    with grpc.secure_channel(target, _creds(pki)) as ch:  # no client certificate
        assert _code(lambda: _update(ch)) == grpc.StatusCode.UNAVAILABLE
    with grpc.secure_channel(target, _creds(pki, "intruder")) as ch:  # signed by another CA
        assert _code(lambda: _update(ch)) == grpc.StatusCode.UNAVAILABLE
    # the typed client speaks mTLS too
    with SchedClient(target, credentials=_creds(pki, "client")) as c:
        assert c.schedule([pb_pod("p")])[0].node_name == "n0"


def test_bearer_token_is_required_except_for_health(start, pki: Path) -> None:  # type: ignore[no-untyped-def]
    server = start(interceptors=(TokenAuthInterceptor(["s3cret", "rotated"]),))
    target = f"127.0.0.1:{server.port}"
    with grpc.insecure_channel(target) as ch:
        assert _update(ch, (("authorization", "Bearer s3cret"),)) == 1
        assert _update(ch, (("authorization", "bearer rotated"),)) == 1
        for md in [(), (("authorization", "Bearer wrong"),), (("authorization", "s3cret"),),
                   (("authorization", "Bearer s3cret-and-more"),), (("x-token", "s3cret"),)]:
            assert _code(lambda md=md: _update(ch, md)) == grpc.StatusCode.UNAUTHENTICATED
        stub = pb_grpc.ScheduleServiceStub(ch)
        for call in [
            lambda: stub.Schedule(pb.ScheduleRequest(pods=[pb_pod("p")]), timeout=10),
            lambda: stub.Explain(pb.ExplainRequest(pod=pb_pod("p")), timeout=10),
            lambda: list(stub.ScheduleStream(iter([pb.ScheduleRequest()]), timeout=10)),
        ]:
            assert _code(call) == grpc.StatusCode.UNAUTHENTICATED
        assert server.engine.cluster("default").snapshot.pods == {}  # refused calls did nothing
        health = health_pb2_grpc.HealthStub(ch)
        resp = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert resp.status == health_pb2.HealthCheckResponse.SERVING
    with SchedClient(target, token="s3cret") as c:
        assert c.schedule([pb_pod("p")])[0].node_name == "n0"
    with SchedClient(target, token="nope") as c:
        assert _code(lambda: c.schedule([pb_pod("q")])) == grpc.StatusCode.UNAUTHENTICATED


def test_tls_and_token_flags_are_checked_at_start(tmp_path: Path) -> None:
    from schedsvc.cli import main

    missing = str(tmp_path / "absent.pem")
    assert main(["serve", "--address", "127.0.0.1:0", "--tls-cert", missing,
                 "--tls-key", missing]) == 2
    assert main(["serve", "--address", "127.0.0.1:0", "--tls-client-ca", missing]) == 2
    empty = tmp_path / "tokens"
    empty.write_text("# no tokens\n")
    assert main(["serve", "--address", "127.0.0.1:0", "--auth-token-file", str(empty)]) == 2
