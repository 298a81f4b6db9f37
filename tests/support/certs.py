"""Throwaway certificates for the TLS tests, made with the ``openssl`` command: a CA, a server
certificate for 127.0.0.1/localhost, a client certificate, and a client certificate from a
second CA the server does not trust."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    rogue_ca: Path
    rogue_cert: Path
    rogue_key: Path


def _run(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _key_args(name: str) -> list[str]:
    return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key"]


def _ca(folder: Path, name: str) -> None:
    _run("req", "-x509", *_key_args(name), "-out", f"{name}.pem", "-days", "2",
         "-subj", f"/CN={name}", cwd=folder)


def _signed(folder: Path, name: str, ca: str, extensions: str) -> None:
    _run("req", *_key_args(name), "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=folder)
    (folder / f"{name}.ext").write_text(extensions + "\n")
    _run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
         "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext",
         cwd=folder)


def make_certs(folder: Path) -> Certs:
    _ca(folder, "ca")
    _ca(folder, "rogue-ca")
    _signed(folder, "server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost")
    _signed(folder, "client", "ca", "extendedKeyUsage=clientAuth")
    _signed(folder, "rogue", "rogue-ca", "extendedKeyUsage=clientAuth")
    return Certs(ca=folder / "ca.pem", server_cert=folder / "server.pem",
                 server_key=folder / "server.key", client_cert=folder / "client.pem",
                 client_key=folder / "client.key", rogue_ca=folder / "rogue-ca.pem",
                 rogue_cert=folder / "rogue.pem", rogue_key=folder / "rogue.key")
