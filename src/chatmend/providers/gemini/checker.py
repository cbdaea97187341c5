"""The offline checker: the 400s Gemini would answer for a body (GE0-GE10), predicted without a call."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatmend.exceptions import Problem
from chatmend.providers.base import CheckContext, CheckPass
from chatmend.providers.gemini.wire import (
    DATA_FIELDS,
    NAME,
    PART_METADATA,
    either_spelling,
    is_base64,
    is_gemini3,
    spellings,
)


def _api_path(path: str) -> str:
    """A body path as the API names fields in its errors (snake_case)."""
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), path)


def _refs(value: Any) -> Iterator[str]:
    """Every `{"$ref": name}` inside a response object (GE9)."""
    if isinstance(value, Mapping):
        ref = value.get("$ref")
        if isinstance(ref, str):
            yield ref
        for v in value.values():
            yield from _refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _refs(v)


_KNOWN_PART_KEYS = spellings(*DATA_FIELDS, *PART_METADATA)


def _newer_kind(part: Mapping[str, Any]) -> bool:
    """True for a part with a field google-genai's `Part` does not have: data of a kind added after it."""
    return any(key not in _KNOWN_PART_KEYS for key in part)


@dataclass
class _Turn:
    """What the turn rules need to know about one content."""

    role: Any
    calls: list[tuple[str | None, str]]  # (id, name) of each functionCall part
    call_signed: list[bool]
    responses: list[str | None]  # id of each functionResponse part
    standard: bool  # has a part other than a function response


def check(body: Any, context: CheckContext) -> list[Problem]:
    """The 400s Gemini would answer `body` with (GE4 by `context.model`, GE8 on the `vertex` platform); a
    malformed body is reported, never raised."""
    return _Pass(context.model, context.platform == "vertex").body(body)


class _Pass(CheckPass):
    """Collects the problems of one body."""

    def __init__(self, model: str | None, vertex: bool) -> None:
        super().__init__(NAME)
        self.model = model
        self.vertex = vertex

    def bytes_field(self, value: Any, path: str) -> None:
        """GE0: bytes travel as base64 text."""
        if not is_base64(value):
            shown = value if isinstance(value, str) else json.dumps(value, default=str)
            self.add(
                "GE0",
                path,
                f"Invalid value at '{_api_path(path)}' (TYPE_BYTES), Base64 decoding failed for \"{shown[:40]}\"",
            )

    def string_field(self, value: Any, path: str) -> None:
        """GE0: a string field (a MIME type, a file URI) given something else."""
        if value is not None and not isinstance(value, str):
            self.add("GE0", path, f"Invalid value at '{_api_path(path)}' (TYPE_STRING), "
                                  f"{json.dumps(value, default=str)[:40]}")

    def struct(self, value: Any, path: str) -> bool:
        """GE0: `args` and `response` are JSON objects (protobuf Struct)."""
        if isinstance(value, Mapping):
            return True
        self.add(
            "GE0",
            path,
            f"Invalid value at '{_api_path(path)}' (type.googleapis.com/google.protobuf.Struct), "
            f"{json.dumps(value, default=str)[:40]}",
        )
        return False

    def blob(self, part: Mapping[str, Any], path: str) -> None:
        """An inlineData or fileData part: mimeType and data (base64) or fileUri."""
        inline = either_spelling(part, "inlineData")
        if inline is not None:
            if not isinstance(inline, Mapping):
                self.add("GE0", path + ".inlineData", "Invalid JSON payload received. Expected an object.")
                return
            self.bytes_field(inline.get("data"), path + ".inlineData.data")
            mime_type = either_spelling(inline, "mimeType")
            self.string_field(mime_type, path + ".inlineData.mimeType")
            if mime_type is None or mime_type == "":  # (any other non-string: `string_field` said so, once)
                self.add(
                    "GE0",
                    path + ".inlineData.mimeType",
                    f"* GenerateContentRequest.{_api_path(path)}.inline_data.mime_type: mime_type must be specified.",
                )
        file = either_spelling(part, "fileData")
        if isinstance(file, Mapping):
            self.string_field(either_spelling(file, "fileUri"), path + ".fileData.fileUri")
            self.string_field(either_spelling(file, "mimeType"), path + ".fileData.mimeType")
        if file is not None and not (isinstance(file, Mapping) and either_spelling(file, "fileUri") not in (None, "")):
            self.add(
                "GE0",
                path + ".fileData",
                f"* GenerateContentRequest.{_api_path(path)}.file_data.file_uri: file_uri must be specified.",
            )

    def part(self, part: Any, path: str, turn: _Turn) -> None:
        """One part: exactly one kind of data, well-formed calls and responses."""
        if not isinstance(part, Mapping):
            self.add("GE0", path, f"Invalid value at '{_api_path(path)}', expected an object.")
            return
        kinds = [k for k in DATA_FIELDS if either_spelling(part, k) is not None]
        if not kinds and _newer_kind(part):
            turn.standard = True  # a kind of data newer than chatmend's list: the API's to judge
            return
        if not kinds:
            self.add(
                "GE0",
                path,
                f"* GenerateContentRequest.{_api_path(path)}.data: "
                "required oneof field 'data' must have one initialized field",
            )
            return
        if len(kinds) > 1:
            self.add(
                "GE0",
                path,
                f"Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '{kinds[1]}'",
            )
        signature = either_spelling(part, "thoughtSignature")
        if signature is not None:
            self.bytes_field(signature, path + ".thoughtSignature")
        kind = kinds[0]
        if kind == "text" and not isinstance(part.get("text"), str):
            self.add("GE0", path + ".text", f"Invalid value at '{_api_path(path)}.text' (TYPE_STRING)")
        elif kind in ("inlineData", "fileData"):
            self.blob(part, path)
        elif kind == "functionCall":
            self.function_call(either_spelling(part, kind), path + ".functionCall", turn, signature is not None)
        elif kind == "functionResponse":
            self.function_response(either_spelling(part, kind), path + ".functionResponse", turn)
        if kind != "functionResponse":
            turn.standard = True

    def function_part(self, part: Any, path: str, payload: str) -> Mapping[str, Any]:
        """What a `functionCall` and a `functionResponse` share: an object (GE0) with a name (GE5), an object
        `payload` (`args` or `response`, GE0), no `id` on Vertex (GE8). The part, or {} when it is not one."""
        checked: Mapping[str, Any] = part if isinstance(part, Mapping) else {}
        if checked is not part:
            self.add("GE0", path, f"Invalid value at '{_api_path(path)}', expected an object.")
        name = checked.get("name")
        if not isinstance(name, str) or not name:
            self.add(
                "GE5",
                path + ".name",
                f"* GenerateContentRequest.{_api_path(path)}.name: Name cannot be empty.",
            )
        if payload in checked:
            self.struct(checked[payload], f"{path}.{payload}")
        if "id" in checked and self.vertex:  # GE8
            self.add(
                "GE8",
                path + ".id",
                f"Invalid JSON payload received. Unknown name \"id\" at '{_api_path(path)}': Cannot find field.",
            )
        elif "id" in checked:
            self.string_field(checked["id"], path + ".id")
        return checked

    def function_call(self, fc: Any, path: str, turn: _Turn, signed: bool) -> None:
        """A `functionCall` (`function_part` with `args`), recorded in its turn."""
        fc = self.function_part(fc, path, "args")
        call_id, name = fc.get("id"), fc.get("name")
        turn.calls.append((call_id if isinstance(call_id, str) and call_id else None, str(name or "")))
        turn.call_signed.append(signed)

    def function_response(self, fr: Any, path: str, turn: _Turn) -> None:
        """A `functionResponse` (`function_part` with `response`) and its parts."""
        fr = self.function_part(fr, path, "response")
        response = fr.get("response")
        inner = fr.get("parts")
        names: set[str] = set()
        if inner is not None:
            if not isinstance(inner, list):
                self.add("GE0", path + ".parts", f"Invalid value at '{_api_path(path)}.parts', expected a list.")
                inner = []
            elif inner and self.model and not is_gemini3(self.model):  # GE10 (INF)
                self.add(
                    "GE10",
                    path + ".parts",
                    f"Multimodal function response parts are not supported by model {self.model}.",
                )
            for q, item in enumerate(inner):
                where = f"{path}.parts[{q}]"
                if not isinstance(item, Mapping) or (
                    either_spelling(item, "inlineData") is None and either_spelling(item, "fileData") is None
                    and not _newer_kind(item)
                ):
                    self.add(
                        "GE0",
                        where,
                        f"* GenerateContentRequest.{_api_path(where)}.data: "
                        "required oneof field 'data' must have one initialized field",
                    )
                    continue
                self.blob(item, where)
                for blob in (either_spelling(item, "inlineData"), either_spelling(item, "fileData")):
                    if isinstance(blob, Mapping) and isinstance(either_spelling(blob, "displayName"), str):
                        names.add(either_spelling(blob, "displayName"))
        for ref in _refs(response):  # GE9
            if ref not in names:
                self.add(
                    "GE9",
                    path + ".response",
                    f"The referenced name {ref} in function_response.response "
                    "does not match to a display_name in the function_response.parts.",
                )
        response_id = fr.get("id")
        turn.responses.append(response_id if isinstance(response_id, str) and response_id else None)

    def content(self, content: Any, path: str) -> _Turn:
        """One content: a valid role (GE7), parts (GE6), each part; what the turn rules need of it."""
        turn = _Turn(role=None, calls=[], call_signed=[], responses=[], standard=False)
        if not isinstance(content, Mapping):
            self.add("GE0", path, f"Invalid value at '{_api_path(path)}', expected an object.")
            return turn
        role = content.get("role")
        turn.role = role
        if role is None:
            turn.role = "user"  # the Developer API defaults a missing role to user; Vertex rejects it (GE7)
            if self.vertex:
                self.add("GE7", path + ".role", "Please use a valid role: user, model.")
        elif role == "system":
            self.add("GE7", path + ".role", "Content with system role is not supported.")
        elif role not in ("user", "model"):
            self.add("GE7", path + ".role", "Please use a valid role: user, model.")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:  # GE6
            self.add(
                "GE6",
                path + ".parts",
                f"* GenerateContentRequest.{_api_path(path)}.parts: contents.parts must not be empty.",
            )
            return turn
        for j, part in enumerate(parts):
            self.part(part, f"{path}.parts[{j}]", turn)
        return turn

    def pairing(self, turns: list[_Turn]) -> None:
        """GE1-GE3: call turns after user turns, each answered by the next turn, one response per call."""
        for i, turn in enumerate(turns):
            path = f"contents[{i}]"
            before = turns[i - 1] if i else None
            if turn.calls:
                if before is None or before.role != "user":  # GE2
                    self.add(
                        "GE2",
                        path,
                        "Please ensure that function call turn comes immediately after a user "
                        "turn or after a function response turn.",
                    )
                after = turns[i + 1] if i + 1 < len(turns) else None
                if after is None or not after.responses:  # GE1: a call turn with no responses at all
                    self.add("GE1", f"contents[{i + 1}]" if after else path, GE1_TEXT)
            if turn.responses:
                if before is None or not before.calls:  # GE3
                    self.add(
                        "GE3",
                        path,
                        "Please ensure that function response turn comes immediately after a function call turn.",
                    )
                else:
                    self.matched(before, turn, path)

    def matched(self, calls: _Turn, responses: _Turn, path: str) -> None:
        """GE1: as many responses as calls; when ids are sent, each call answered once under its id."""
        if len(responses.responses) != len(calls.calls):
            self.add("GE1", path, GE1_TEXT)
            return
        call_ids = [c for c, _ in calls.calls]
        # Ids pair calls and responses only when both sides carry them; otherwise order does (INF).
        if all(call_ids) and all(responses.responses):
            paired = len(set(call_ids)) == len(call_ids) and set(call_ids) == set(responses.responses)
            if not paired:
                self.add("GE1", path,
                         GE1_TEXT + " Function response ids must match the function call ids of that turn.")

    def signatures(self, turns: list[_Turn]) -> None:
        """GE4 (Gemini 3): the first call of each step of the current turn carries its thought signature."""
        start = 0
        for i, turn in enumerate(turns):
            if turn.role == "user" and turn.standard:
                start = i
        for i in range(start, len(turns)):
            turn = turns[i]
            if turn.role == "model" and turn.calls and not turn.call_signed[0]:
                name = turn.calls[0][1]
                self.add("GE4", f"contents[{i}]", _GE4.format(name=name, position=i))

    def body(self, body: Any) -> list[Problem]:
        """Every problem of a body (or a bare contents list), never raising."""
        if isinstance(body, Sequence) and not isinstance(body, (str, bytes)):
            body = {"contents": body}
        if not isinstance(body, Mapping):
            self.add("GE0", "", "Invalid JSON payload received. Expected an object.")
            return self.problems
        system = either_spelling(body, "systemInstruction")
        if system is not None:
            parts = system.get("parts") if isinstance(system, Mapping) else None
            if not isinstance(parts, list) or not parts:  # GE6
                self.add(
                    "GE6",
                    "systemInstruction.parts",
                    "* GenerateContentRequest.system_instruction.parts: contents.parts must not be empty.",
                )
            else:
                for j, part in enumerate(parts):
                    self.part(part, f"systemInstruction.parts[{j}]", _Turn(None, [], [], [], False))
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:  # GE6
            self.add("GE6", "contents", "* GenerateContentRequest.contents: contents is not specified")
            return self.problems
        turns = [self.content(c, f"contents[{i}]") for i, c in enumerate(contents)]
        self.pairing(turns)
        if is_gemini3(self.model):
            self.signatures(turns)
        return self.problems


_GE4 = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
    "function call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
GE1_TEXT = (
    "Please ensure that the number of function response parts is equal to the number of function call parts "
    "of the function call turn."
)
"""Gemini's words for GE1 (also `providers.words`' for a session's unanswered calls)."""
