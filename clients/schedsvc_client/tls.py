"""Channel credentials for a schedsvc server behind TLS (the server's --tls-* flags)."""

from __future__ import annotations

from pathlib import Path

import grpc

__all__ = ["tls_credentials"]


def tls_credentials(
    ca_file: str | Path, cert_file: str | Path | None = None, key_file: str | Path | None = None
) -> grpc.ChannelCredentials:
    """TLS trusting `ca_file`; with a certificate and key, the client side of mutual TLS."""
    cert = Path(cert_file).read_bytes() if cert_file else None
    key = Path(key_file).read_bytes() if key_file else None
    return grpc.ssl_channel_credentials(Path(ca_file).read_bytes(), key, cert)
