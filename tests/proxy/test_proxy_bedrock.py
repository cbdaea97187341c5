"""The proxy's Bedrock Converse routes: boto3's `bedrock-runtime` client pointed at the proxy (`endpoint_url`), the
proxy at the fake upstream. Bodies with a Bedrock API key (bearer) are repaired with the model's own rules; the
event stream of `converse-stream` comes back byte for byte; a SigV4-signed request is forwarded as it came (its
signature covers the body), or repaired and signed again with the proxy's own credentials (`sign_bedrock`)."""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import boto3
import httpx2
import pytest
from botocore import UNSIGNED
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from chatmend.providers import bedrock
from chatmend.proxy import REPAIRED_HEADER
from tests.proxy.conftest import proxy_config, running_proxy
from tests.proxy.test_proxy_faults import _free_port
from tests.proxy.upstream import Upstream, bedrock_stream

CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
LLAMA = "us.meta.llama4-maverick-17b-instruct-v1:0"
# a session saved while two tools ran: the second call has no result, and the user typed after the first
BROKEN = {
    "messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_1", "name": "search",
                                                       "input": {"q": "a"}}},
                                          {"toolUse": {"toolUseId": "tooluse_2", "name": "search",
                                                       "input": {"q": "b"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "1"}]}},
                                     {"text": "and?"}]},
    ],
    "toolConfig": {"tools": [{"toolSpec": {"name": "search", "inputSchema": {"json": {"type": "object"}}}}]},
    "inferenceConfig": {"maxTokens": 100},
}


@contextmanager
def client(url: str, **credentials: str) -> Iterator[Any]:
    """boto3's client at `url`: signing with SigV4 when given credentials, else sending a Bedrock API key
    (`Authorization: Bearer`; boto3 itself sends one only over HTTPS, so here a hook adds the header to an
    unsigned request)."""
    config = Config(retries={"max_attempts": 1}, **({} if credentials else {"signature_version": UNSIGNED}))
    made = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, config=config, **credentials)

    def add_key(request: Any, **kwargs: Any) -> None:
        request.headers["Authorization"] = "Bearer test-api-key"

    if not credentials:
        made.meta.events.register("request-created.bedrock-runtime.*", add_key)
    try:
        yield made
    finally:
        made.close()


def _sdk(body: dict[str, Any], model: str) -> dict[str, Any]:
    return bedrock.PROVIDER._sdk_body(body, {"model": model})


def test_a_broken_converse_request_arrives_repaired_and_the_reply_comes_back(
        proxy: str, upstream: Upstream) -> None:
    assert bedrock.check(BROKEN) != []
    with client(proxy) as bedrock_client:
        reply = bedrock_client.converse(**_sdk(BROKEN, CLAUDE))
    seen = upstream.seen[-1]
    assert seen.path == "/model/" + quote(CLAUDE, safe="") + "/converse"  # as boto3 encoded it
    assert seen.headers["authorization"] == "Bearer test-api-key"
    assert seen.problems == []
    assert seen.json()["inferenceConfig"] == BROKEN["inferenceConfig"]
    assert REPAIRED_HEADER in reply["ResponseMetadata"]["HTTPHeaders"]
    assert bedrock.from_response(reply).content == "done"


def test_a_valid_request_arrives_as_it_was_sent(proxy: str, upstream: Upstream) -> None:
    valid = bedrock.to_request(bedrock.from_request(BROKEN), model=CLAUDE)
    with client(proxy) as bedrock_client:
        reply = bedrock_client.converse(**_sdk(valid, CLAUDE))
    assert upstream.seen[-1].json() == valid
    assert REPAIRED_HEADER not in reply["ResponseMetadata"]["HTTPHeaders"]


def test_converse_stream_comes_back_byte_for_byte(proxy: str, upstream: Upstream) -> None:
    path = "/model/" + quote(CLAUDE, safe="") + "/converse-stream"
    with httpx2.Client() as http:
        response = http.post(proxy + path, content=json.dumps(BROKEN), headers={
            "authorization": "Bearer k", "content-type": "application/json"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert response.content == b"".join(bedrock_stream()) == upstream.sent[path]
    assert upstream.seen[-1].problems == []
    with client(proxy) as bedrock_client:
        streamed = bedrock_client.converse_stream(**_sdk(BROKEN, CLAUDE))
        assert bedrock.from_stream(streamed).content == "done"
    assert upstream.seen[-1].problems == []


def test_the_models_own_rules_apply_by_the_model_in_the_path(proxy: str, upstream: Upstream) -> None:
    # Llama refuses a result and text in one turn (BR9): repaired for it, the turn is split
    with client(proxy) as bedrock_client:
        bedrock_client.converse(**_sdk(BROKEN, LLAMA))
    seen = upstream.seen[-1]
    assert seen.problems == []  # the fake upstream checks with the path's model
    assert bedrock.check(seen.json(), model=LLAMA) == []
    assert [m["role"] for m in seen.json()["messages"]] == ["user", "assistant", "user", "assistant", "user"]


def test_an_arn_model_id_keeps_its_encoding(proxy: str, upstream: Upstream) -> None:
    arn = "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0"
    with client(proxy) as bedrock_client:
        bedrock_client.converse(**_sdk(BROKEN, arn))
    assert upstream.seen[-1].path == "/model/" + quote(arn, safe="") + "/converse"
    assert upstream.seen[-1].problems == []


def test_a_sigv4_signed_request_is_forwarded_as_it_came(proxy: str, upstream: Upstream,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="chatmend.proxy"), \
            client(proxy, aws_access_key_id="AKIDCLIENT", aws_secret_access_key="client-secret") as bedrock_client:
        bedrock_client.converse(**_sdk(BROKEN, CLAUDE))
    seen = upstream.seen[-1]
    assert seen.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDCLIENT/")
    assert json.loads(seen.raw) == BROKEN  # unrepaired: a changed body would not match its signature
    assert seen.problems != []
    assert any("signed_unrepaired" in r.getMessage() for r in caplog.records)
    assert "client-secret" not in caplog.text


def _verifies(seen: Any, url: str, credentials: Credentials) -> bool:
    """True when the request's SigV4 signature is the one these credentials give for what arrived."""
    authorization = seen.headers["authorization"]
    signed_headers = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    request = AWSRequest(method=seen.method, url=url + seen.path, data=seen.raw,
                         headers={h: seen.headers[h] for h in signed_headers})
    scope = authorization.split("Credential=")[1].split(",")[0].split("/")
    auth = SigV4Auth(credentials, scope[3], scope[2])
    request.context["timestamp"] = seen.headers["x-amz-date"]
    datetime.datetime.strptime(seen.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    canonical = auth.canonical_request(request)
    signature = auth.signature(auth.string_to_sign(request, canonical), request)
    return bool(authorization.endswith("Signature=" + signature) and scope[0] == credentials.access_key)


def test_sign_bedrock_repairs_a_signed_request_and_signs_it_with_the_proxys_credentials(
        upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDPROXY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "proxy-secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with running_proxy(proxy_config(upstream, sign_bedrock=True)) as url, \
            client(url, aws_access_key_id="AKIDCLIENT", aws_secret_access_key="client-secret") as bedrock_client:
        reply = bedrock_client.converse(**_sdk(BROKEN, CLAUDE))
        streamed = bedrock_client.converse_stream(**_sdk(BROKEN, CLAUDE))
        assert bedrock.from_stream(streamed).content == "done"
    assert REPAIRED_HEADER in reply["ResponseMetadata"]["HTTPHeaders"]
    proxy_credentials = Credentials("AKIDPROXY", "proxy-secret")
    for seen in upstream.seen[-2:]:
        assert seen.problems == []
        assert "/us-east-1/bedrock/aws4_request" in seen.headers["authorization"]
        assert _verifies(seen, upstream.url, proxy_credentials)
        assert not _verifies(seen, upstream.url, Credentials("AKIDCLIENT", "client-secret"))


def test_an_unreachable_upstream_is_a_502_boto3_reads_as_its_own_error() -> None:
    dead = f"http://127.0.0.1:{_free_port()}"
    from chatmend.proxy import ProxyConfig

    config = ProxyConfig(upstreams={"anthropic": dead, "openai": dead + "/v1", "gemini": dead, "bedrock": dead})
    with running_proxy(config) as url, client(url) as bedrock_client, pytest.raises(ClientError) as error:
        bedrock_client.converse(**_sdk(BROKEN, CLAUDE))
    assert error.value.response["Error"]["Code"] == "ServiceUnavailableException"
    assert "chatmend proxy" in error.value.response["Error"]["Message"]
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 502


def test_upstream_errors_pass_through(proxy: str, upstream: Upstream) -> None:
    with httpx2.Client() as http:
        response = http.post(proxy + "/model/m/converse", json=BROKEN, headers={"x-test-status": "429"})
    assert response.status_code == 429 and response.content == upstream.sent["/model/m/converse"]


def test_other_bedrock_runtime_paths_are_forwarded_unchanged(proxy: str, upstream: Upstream) -> None:
    body = b'{"prompt": "hi"}'
    with httpx2.Client() as http:
        http.post(proxy + "/model/meta.llama3-8b-instruct-v1%3A0/invoke", content=body,
                  headers={"authorization": "AWS4-HMAC-SHA256 Credential=K/20260101/us-east-1/bedrock/aws4_request, "
                                            "SignedHeaders=host, Signature=00"})
    assert upstream.seen[-1].raw == body and upstream.seen[-1].path == "/model/meta.llama3-8b-instruct-v1%3A0/invoke"


def test_sign_bedrock_without_credentials_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    from chatmend.cli import main

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-role lookup: no network
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    assert main(["proxy", "--sign-bedrock", "--port", "1"]) == 2
    assert "--sign-bedrock: botocore finds no AWS credentials" in capsys.readouterr().err
