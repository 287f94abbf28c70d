"""TLS and mutual TLS server credentials from PEM files.

Files are read once at start-up, so a missing or unreadable file fails `schedsvc serve` at once
with the file's name rather than at the first handshake.
"""

from __future__ import annotations

from pathlib import Path

import grpc

from ..errors import ConfigError

__all__ = ["server_credentials"]


def _read(flag: str, path: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(flag, f"cannot read {path}: {exc.strerror or exc}") from exc
    if b"-----BEGIN" not in data:
        raise ConfigError(flag, f"{path} is not a PEM file")
    return data


def server_credentials(
    cert_file: str, key_file: str, client_ca_file: str = ""
) -> grpc.ServerCredentials:
    """TLS with the server's certificate chain and key; with `client_ca_file`, mutual TLS:
    every client must present a certificate signed by that CA, or the handshake fails."""
    if not cert_file or not key_file:
        raise ConfigError("--tls-cert", "--tls-cert and --tls-key go together")
    pair = [(_read("--tls-key", key_file), _read("--tls-cert", cert_file))]
    if client_ca_file:
        return grpc.ssl_server_credentials(
            pair,
            root_certificates=_read("--tls-client-ca", client_ca_file),
            require_client_auth=True,
        )
    return grpc.ssl_server_credentials(pair)
