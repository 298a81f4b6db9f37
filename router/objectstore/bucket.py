"""The one client of object storage: boto3's S3 client, configured the standard AWS way (the
credentials chain, ``AWS_REGION``, ``AWS_ENDPOINT_URL`` for an S3-compatible store such as
MinIO, Ceph or R2). Every failure is ``IndexUnavailable`` naming the bucket and what to fix.

``CURRENT`` is written conditionally (``If-Match`` the ETag it was read with, or
``If-None-Match: *`` when there was none), so of two publishers racing, the second learns it
lost the race instead of silently overwriting a pointer it never saw.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from router.errors import IndexUnavailable
from router.index.versions.layout import CURRENT
from router.objectstore.location import ObjectLocation

log = logging.getLogger(__name__)

_MISSING = {"NoSuchKey", "404", "NotFound"}
_LOST_RACE = {"PreconditionFailed", "412", "ConditionalRequestConflict", "409"}
_NO_CONDITIONS = {"NotImplemented", "501"}


@dataclass(frozen=True)
class Listed:
    """One object under the index: its size and when it was last written."""

    size: int
    modified: datetime


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class Bucket:
    """The objects of one index location (``client``: a boto3 S3 client, made when None)."""

    def __init__(self, location: ObjectLocation, client: Any = None) -> None:
        self.location = location
        self._client = client if client is not None else boto3.client("s3")
        self._conditional = True

    @contextmanager
    def _calling(self, what: str) -> Any:
        try:
            yield
        except NoCredentialsError as exc:
            raise IndexUnavailable(f"{self.location.url}: no AWS credentials to {what} (set "
                                   "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE or "
                                   "a role)") from exc
        except ClientError as exc:
            raise IndexUnavailable(f"{self.location.url}: cannot {what}: {_code(exc)}: "
                                   f"{exc}") from exc
        except BotoCoreError as exc:
            raise IndexUnavailable(f"{self.location.url}: cannot {what}: {exc} (is "
                                   "AWS_ENDPOINT_URL right and the store up?)") from exc

    def read_current(self) -> tuple[str, str] | None:
        """``(version, etag)`` of ``CURRENT``; None when the index has none yet."""
        key = self.location.key(CURRENT)
        with self._calling(f"read {CURRENT}"):
            try:
                got = self._client.get_object(Bucket=self.location.bucket, Key=key)
            except ClientError as exc:
                if _code(exc) in _MISSING:
                    return None
                raise
            return got["Body"].read().decode("utf-8").strip(), str(got["ETag"])

    def write_current(self, version: str, etag: str | None) -> bool:
        """Point ``CURRENT`` at ``version`` if it is still as read (``etag``; None: absent).
        False when another publisher wrote it first."""
        args = {"Bucket": self.location.bucket, "Key": self.location.key(CURRENT),
                "Body": (version + "\n").encode("utf-8"), "ContentType": "text/plain"}
        if self._conditional:
            args.update({"IfMatch": etag} if etag else {"IfNoneMatch": "*"})
        with self._calling(f"write {CURRENT}"):
            try:
                self._client.put_object(**args)
            except ClientError as exc:
                if _code(exc) in _LOST_RACE:
                    return False
                if _code(exc) not in _NO_CONDITIONS or not self._conditional:
                    raise
                log.warning("%s does not take conditional writes; the last publisher's %s "
                            "wins", self.location.url, CURRENT)
                self._conditional = False
                return self.write_current(version, etag)
        return True

    def listing(self, relative: str) -> dict[str, Listed]:
        """Every object under ``relative`` (a folder of the index root), by relative path."""
        found: dict[str, Listed] = {}
        pages = self._client.get_paginator("list_objects_v2")
        with self._calling(f"list {relative}"):
            for page in pages.paginate(Bucket=self.location.bucket,
                                       Prefix=self.location.key(relative.rstrip("/") + "/")):
                for item in page.get("Contents", ()):
                    found[self.location.relative(item["Key"])] = Listed(
                        int(item["Size"]), item["LastModified"])
        return found

    def upload(self, path: Path, relative: str) -> None:
        with self._calling(f"upload {relative}"):
            self._client.upload_file(str(path), self.location.bucket,
                                     self.location.key(relative))

    def download(self, relative: str, path: Path) -> None:
        with self._calling(f"download {relative}"):
            self._client.download_file(self.location.bucket, self.location.key(relative),
                                       str(path))

    def delete(self, relatives: Iterable[str]) -> None:
        keys = [{"Key": self.location.key(r)} for r in relatives]
        if not keys:
            return
        with self._calling("delete old versions"):
            for start in range(0, len(keys), 1000):
                self._client.delete_objects(Bucket=self.location.bucket,
                                            Delete={"Objects": keys[start:start + 1000],
                                                    "Quiet": True})


BucketFactory = Callable[[ObjectLocation], Bucket]
