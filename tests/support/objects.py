"""An S3 server on loopback for the object-storage tests: moto's server mode (the S3 HTTP
protocol, no AWS), one per test session, and a fresh bucket per test with the standard AWS
environment (``AWS_ENDPOINT_URL``, fake credentials, a region) pointing at it, so boto3 in this
process and in the subprocesses it starts finds it the way it finds any S3-compatible store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import boto3
import pytest
from moto.server import ThreadedMotoServer


@dataclass(frozen=True)
class S3:
    """The running server and this test's bucket."""

    endpoint: str
    bucket: str
    env: dict[str, str]

    def url(self, prefix: str = "index") -> str:
        return f"s3://{self.bucket}/{prefix}"

    def client(self) -> object:
        return boto3.client("s3")


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture()
def s3(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> S3:
    env = {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_REGION": "us-east-1"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    bucket = f"index-{uuid.uuid4().hex[:12]}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    return S3(s3_endpoint, bucket, env)
