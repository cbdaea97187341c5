"""Signing a Bedrock request again with SigV4 (`--sign-bedrock`), with the proxy process's own AWS credentials.

A SigV4 signature covers the request's host and the hash of its body: a client signs for the proxy's address,
and a repaired body has another hash, so such a request is only valid upstream when signed there again. The
client's signature headers are dropped, every other header is kept and signed, as botocore signs its own requests
(`botocore.auth.SigV4Auth`). Credentials come from botocore's chain (environment, shared profile, instance or
container role) and are never logged.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Signer", "load_signer"]

_CLIENT_SIGNATURE = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"})
_REGION_OF_HOST = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?")


class Signer:
    """Signs requests with one botocore credentials provider (refreshed by botocore as they expire)."""

    def __init__(self, credentials: Any) -> None:
        self._credentials = credentials

    def sign(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes,
             scope: tuple[str, str] | None) -> list[tuple[str, str]]:
        """The headers to send: the client's, without its signature, signed for `url` and `body`, for the service
        `bedrock` (whatever the client's scope names) in the region of the configured `bedrock-runtime` upstream
        host; the client's credential scope names the region only for an upstream whose host names none (a VPC
        endpoint, a test server)."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        region = _region_of_host(url) or (scope[0] if scope else None)
        if region is None:
            raise ValueError(f"cannot tell the AWS region of {url}: the request's signature names none")
        service = "bedrock"
        kept = [(k, v) for k, v in headers if k.lower() not in _CLIENT_SIGNATURE]
        request = AWSRequest(method=method, url=url, data=body, headers=dict(kept))
        SigV4Auth(self._credentials.get_frozen_credentials(), service, region).add_auth(request)
        return [(k, v) for k, v in request.headers.items()]


def _region_of_host(url: str) -> str | None:
    found = _REGION_OF_HOST.fullmatch(urlsplit(url).hostname or "")
    return found.group(1) if found else None


def load_signer() -> Signer:
    """The signer of this process's AWS credentials; a ValueError when botocore finds none or is not installed."""
    try:
        import botocore.session
    except ImportError:
        raise ValueError("--sign-bedrock needs botocore: pip install 'chatmend[bedrock]'") from None
    credentials = botocore.session.Session().get_credentials()
    if credentials is None:
        raise ValueError("--sign-bedrock: botocore finds no AWS credentials for this process (environment, profile "
                         "or role)")
    return Signer(credentials)
