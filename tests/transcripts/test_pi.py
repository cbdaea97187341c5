"""pi sessions (and OpenClaw's, the same format): read as pi resumes them (the `parentId` path from the last entry,
the latest compaction, context edits, errored or aborted replies left out), repaired entry by entry.

The first tests run pi's own session manager (`pi_session.mjs`, the npm package installed once per version in a
cache folder): what it writes checks clean and repairs to the same bytes; a session killed mid-call is repaired, and
pi's own loader then builds a context where every call has its result. The rest are hand-made, one per rule.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart
from chatmend.cli import main
from chatmend.doctor import doctor
from chatmend.exceptions import InputError
from chatmend.transcripts import pi
from tests.strategies import examples, valid_histories
from tests.transcripts.helpers import lines_of, read_text

PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "1.6.0"
"""The pi release the tests run (pi moved from `@mariozechner/pi-coding-agent` 0.73 to this scope)."""
SCRIPT = Path(__file__).with_name("pi_session.mjs")
HOUR_AGO = time.time() - 3600


# --- pi's own code -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pi_package() -> Path:
    """pi-coding-agent installed from npm at PI_VERSION, cached in the temp folder across runs."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run pi's own session manager")
    cache = Path(tempfile.gettempdir()) / "chatmend-npm-cache" / f"pi-coding-agent-{PI_VERSION}"
    package = cache / "node_modules" / PI_PACKAGE
    if not (package / "dist" / "core" / "session-manager.js").exists():
        staging = Path(tempfile.mkdtemp(prefix="pi-install-", dir=cache.parent if cache.parent.exists() else None))
        try:
            done = subprocess.run(
                ["npm", "install", "--prefix", str(staging), f"{PI_PACKAGE}@{PI_VERSION}", "--no-audit", "--no-fund",
                 "--ignore-scripts", "--omit=optional", "--no-save"],
                capture_output=True, text=True, timeout=240, check=False)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm could not install {PI_PACKAGE}@{PI_VERSION} in 240 s")
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            pytest.skip(f"npm could not install {PI_PACKAGE}@{PI_VERSION} (no registry?): {done.stderr[-300:]}")
        cache.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(cache)
        except OSError:  # another run installed it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    return package


def _node(package: Path, *args: str) -> str:
    done = subprocess.run(["node", str(SCRIPT), str(package), *args], capture_output=True, text=True, timeout=60,
                          check=True)
    return done.stdout.strip()


def written_by_pi(package: Path, folder: Path, scenario: str) -> Path:
    """A session file pi's SessionManager writes for a scenario of pi_session.mjs."""
    return Path(_node(package, "write", str(folder), scenario))


def pi_context(package: Path, path: Path) -> list[dict[str, Any]]:
    """The messages pi's own loader builds from a session file (SessionManager.open, buildSessionContext)."""
    value: list[dict[str, Any]] = json.loads(_node(package, "context", str(path)))
    return value


def assert_every_call_answered(messages: Sequence[dict[str, Any]]) -> None:
    """Each toolCall answered by a toolResult before the next non-result message, and no result without its call."""
    waiting: set[str] = set()
    for message in messages:
        if message["role"] == "toolResult":
            assert message["toolCallId"] in waiting, message
            waiting.discard(message["toolCallId"])
            continue
        assert not waiting, f"unanswered: {waiting}"
        if message["role"] == "assistant":
            waiting = {b["id"] for b in message["content"] if b.get("type") == "toolCall"}
    assert not waiting, f"unanswered: {waiting}"


@pytest.mark.parametrize("scenario", ["tools", "branched"])
def test_what_pi_writes_checks_clean_and_repairs_to_the_same_bytes(pi_package: Path, tmp_path: Path,
                                                                   scenario: str) -> None:
    path = written_by_pi(pi_package, tmp_path, scenario)
    text = path.read_text(encoding="utf-8")
    session = read_text(text)
    assert (session.format, session.provider, session.model) == ("pi", "anthropic", "claude-sonnet-4-5")
    assert [m.role for m in session.messages][:4] == ["user", "assistant", "tool", "tool"]
    assert isinstance(session.messages[1].content, tuple) and isinstance(session.messages[1].content[0], ThinkingPart)
    if scenario == "branched":  # the abandoned branch (toolu_03) is not what pi sends
        assert all(c.id != "toolu_03" for m in session.messages for c in m.tool_calls)
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == text
    assert main(["check", str(path)]) == 0


@pytest.mark.parametrize("scenario", ["killed", "killed-last"])
def test_a_session_killed_mid_call_is_repaired_and_pi_loads_every_call_answered(
        pi_package: Path, tmp_path: Path, scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = written_by_pi(pi_package, tmp_path, scenario)
    before = path.read_text(encoding="utf-8").splitlines()
    with pytest.raises(AssertionError, match="unanswered"):
        assert_every_call_answered(pi_context(pi_package, path))  # pi's file as is: pi heals it only as it sends
    assert main(["check", str(path)]) == 1
    assert ("toolu_02" if scenario == "killed" else "toolu_04") in capsys.readouterr().out
    assert main(["repair", "--in-place", str(path)]) == 0
    assert main(["check", str(path)]) == 0
    after = path.read_text(encoding="utf-8").splitlines()
    added = [line for line in after if line not in before]
    assert len(after) == len(before) + 1 and len(added) in (1, 2)  # the new result, and the entry relinked to it
    new = json.loads(added[0])
    assert new["message"]["role"] == "toolResult" and new["message"]["isError"] is True
    context = pi_context(pi_package, path)
    assert_every_call_answered(context)
    assert sum(1 for m in context if m["role"] == "user") == sum(
        1 for m in pi_context(pi_package, path.with_name(path.name + ".bak")) if m["role"] == "user")


def test_pi_answers_an_unanswered_call_only_as_it_sends_and_sends_an_orphan_result_as_it_is(
        pi_package: Path, tmp_path: Path) -> None:
    """What pi itself does on resume with a broken session (as is): pi-ai's transformMessages invents a result for
    a call left without one, but keeps a result whose call is gone, which the provider refuses."""
    path = written_by_pi(pi_package, tmp_path, "killed")
    sent = json.loads(_node(pi_package, "sent", str(path)))
    invented = [m for m in sent if m["role"] == "toolResult" and m["toolCallId"] == "toolu_02"]
    assert [m["content"] for m in invented] == [[{"type": "text", "text": "No result provided"}]]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    call = next(i for i, line in enumerate(lines) if '"toolu_01"' in line and '"assistant"' in line)
    entry = json.loads(lines[call])
    entry["message"]["stopReason"] = "aborted"  # a reply pi leaves out, with its result still in the file
    lines[call] = json.dumps(entry) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    sent = json.loads(_node(pi_package, "sent", str(path)))
    assert [m["toolCallId"] for m in sent if m["role"] == "toolResult"][:1] == ["toolu_01"]  # sent, orphaned
    assert main(["repair", "--in-place", str(path)]) == 0
    assert_every_call_answered(json.loads(_node(pi_package, "sent", str(path))))


def test_a_session_cut_after_its_call_is_answered_at_its_end(pi_package: Path, tmp_path: Path) -> None:
    path = written_by_pi(pi_package, tmp_path, "tools")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"toolu_04"' in line and '"toolResult"' in line)
    path.write_text("".join(lines[:cut]), encoding="utf-8")  # killed while toolu_04 ran: its result never written
    assert main(["repair", "--in-place", str(path)]) == 0
    out = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert out[:cut] == lines[:cut]
    assert json.loads(out[cut])["parentId"] == json.loads(lines[cut - 1])["id"]
    assert_every_call_answered(pi_context(pi_package, path))


# --- hand-made sessions --------------------------------------------------------------------------------------


class Writer:
    """Entries as pi's session manager appends them: each the child of the one before (or of `parent`)."""

    def __init__(self, version: int = 3) -> None:
        self.records: list[dict[str, Any]] = [{"type": "session", "version": version, "id": "s-1",
                                               "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}]
        self.leaf: str | None = None
        self.count = 0

    def entry(self, kind: str, parent: str | None = "leaf", **fields: Any) -> str:
        self.count += 1
        uid = f"e{self.count:07d}"
        self.records.append({"type": kind, "id": uid, "parentId": self.leaf if parent == "leaf" else parent,
                             "timestamp": f"2026-01-01T00:00:{self.count:02d}.000Z", **fields})
        self.leaf = uid
        return uid

    def user(self, text: str, **more: Any) -> str:
        return self.entry("message", message={"role": "user", "content": [{"type": "text", "text": text}],
                                              "timestamp": self.count}, **more)

    def reply(self, *calls: str, text: str = "", stop: str = "toolUse", api: str = "anthropic-messages") -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", "id": c, "name": "bash", "arguments": {"c": c}} for c in calls]
        return self.entry("message", message={"role": "assistant", "content": content, "api": api,
                                              "provider": "p", "model": "m-1", "stopReason": stop,
                                              "timestamp": self.count})

    def result(self, call: str, text: str = "ok") -> str:
        return self.entry("message", message={"role": "toolResult", "toolCallId": call, "toolName": "bash",
                                              "content": [{"type": "text", "text": text}], "isError": False,
                                              "timestamp": self.count})

    def text(self) -> str:
        return "".join(lines_of(self.records))


def _repaired(text: str) -> tuple[Any, list[dict[str, Any]]]:
    result, chunks = read_text(text).repaired(None)
    return result, [json.loads(line) for line in "".join(chunks).splitlines()]


def test_an_unanswered_call_gets_a_result_entry_the_next_entry_hangs_off() -> None:
    w = Writer()
    w.user("go")
    call = w.reply("c1", "c2")
    w.result("c1")
    nxt = w.user("next")
    w.reply(text="done", stop="stop")
    text = w.text()
    result, out = _repaired(text)
    assert [c.id for c in result.interrupted] == ["c2"]
    added = out[4]
    assert added["type"] == "message" and added["parentId"] == "e0000003" and added["id"] not in text
    assert added["message"] == {"role": "toolResult", "toolCallId": "c2", "toolName": "bash", "content": [
        {"type": "text", "text": result.messages[3].content}], "isError": True, "timestamp": 1}
    assert added["timestamp"] == w.records[2]["timestamp"]  # stamped with its call's entry
    assert out[5]["id"] == nxt and out[5]["parentId"] == added["id"]
    assert out[5] == {**w.records[4], "parentId": added["id"]}
    original = text.splitlines()
    written = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in out]
    assert written[:4] == original[:4] and written[6:] == original[5:]
    assert call == "e0000002"
    assert not read_text("\n".join(written) + "\n").repaired(None)[0].changed


def test_a_result_whose_call_is_gone_becomes_a_user_note_in_its_entry() -> None:
    w = Writer()
    w.user("go")
    w.reply("c1")
    w.result("c1")
    w.result("ghost", "stale")
    w.reply(text="done", stop="stop")
    result, out = _repaired(w.text())
    assert result.notes and len(out) == len(w.records)
    note = out[4]
    assert (note["id"], note["parentId"]) == (w.records[4]["id"], w.records[4]["parentId"])
    assert note["message"]["role"] == "user" and "ghost" in note["message"]["content"][0]["text"]
    assert out[:4] == w.records[:4] and out[5:] == w.records[5:]


def test_a_repeated_call_id_is_renamed_in_its_call_and_its_result() -> None:
    w = Writer()
    w.user("go")
    w.reply("c1")
    w.result("c1")
    w.user("again")
    w.reply("c1")
    w.result("c1", "second")
    result, out = _repaired(w.text())
    assert result.renamed
    new_id = out[5]["message"]["content"][0]["id"]
    assert new_id != "c1" and out[6]["message"]["toolCallId"] == new_id
    assert out[:5] == w.records[:5]


def test_an_aborted_or_errored_reply_is_not_sent_so_its_results_are_orphans() -> None:
    w = Writer()
    w.user("go")
    w.reply("c1", stop="aborted")  # pi-ai leaves it out of what it sends
    w.user("retry")
    w.reply("c2", stop="error")
    w.result("c2")
    session = read_text(w.text())
    assert [m.role for m in session.messages] == ["user", "user", "tool"]
    result, out = _repaired(w.text())
    assert not result.interrupted and result.notes
    assert out[4] == w.records[4] and out[2] == w.records[2]  # the replies kept as they were
    assert out[5]["message"]["role"] == "user"


def test_only_the_path_from_the_last_entry_is_read() -> None:
    w = Writer()
    w.user("go")
    answer = w.reply(text="hi", stop="stop")
    w.user("list c")
    w.reply("c9")  # abandoned while c9 ran: not on the path pi resumes
    w.entry("branch_summary", parent=answer, fromId=answer, summary="tried listing c")
    w.user("something else")
    w.reply(text="sure", stop="stop")
    session = read_text(w.text())
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "user", "assistant"]
    assert session.messages[2].content == ("The following is a summary of a branch that this conversation came back "
                                           "from:\n\n<summary>\ntried listing c</summary>")
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == w.text()


def test_the_latest_compaction_sends_its_summary_then_the_kept_entries() -> None:
    w = Writer()
    w.user("old")
    w.reply("c1")
    w.result("c1")
    w.user("kept")
    kept = w.leaf
    w.reply("c2")
    w.entry("compaction", summary="did things", firstKeptEntryId=kept, tokensBefore=100)
    w.result("c1", "late")  # its call lies before the kept range: an orphan
    w.result("c2")
    session = read_text(w.text())
    assert [m.role for m in session.messages] == ["user", "user", "assistant", "tool", "tool"]
    assert isinstance(session.messages[0].content, str) and "<summary>\ndid things\n</summary>" in \
        session.messages[0].content
    result, out = _repaired(w.text())
    assert len(result.notes) == 1 and len(out) == len(w.records) and out[:7] == w.records[:7]
    roles = [(r["id"], r["message"]["role"]) for r in out[7:]]
    assert roles in ([("e0000007", "user"), ("e0000008", "toolResult")],
                     [("e0000008", "toolResult"), ("e0000007", "user")])


def test_a_call_kept_by_a_compaction_is_answered_before_it_and_the_compaction_stays_in_place() -> None:
    w = Writer()
    w.user("old")
    kept = w.user("kept")
    w.reply("c2")  # killed while c2 ran; pi compacted, then went on
    compaction = w.entry("compaction", summary="did things", firstKeptEntryId=kept, tokensBefore=100)
    w.user("go on")
    result, out = _repaired(w.text())
    assert [c.id for c in result.interrupted] == ["c2"]
    assert [r.get("id") for r in out[:4]] == ["s-1", "e0000001", kept, "e0000003"] and out[4]["message"]["role"] == \
        "toolResult"
    assert out[5] == {**w.records[4], "parentId": out[4]["id"]} and out[5]["id"] == compaction
    assert out[6] == w.records[5]
    assert [m.role for m in read_text("".join(lines_of(out))).messages] == ["user", "user", "assistant", "tool",
                                                                            "user"]


def test_a_context_edit_removes_or_replaces_what_pi_sends() -> None:
    w = Writer()
    w.user("go")
    w.reply("c1")
    target = w.result("c1", "a huge output")
    w.user("more")
    dropped = w.leaf
    w.entry("context_edit", targetId=target, replacement={"content": "(trimmed)"})
    w.entry("context_edit", targetId=dropped, replacement=None)
    w.reply(text="ok", stop="stop")
    session = read_text(w.text())
    assert [(m.role, m.content) for m in session.messages][2:] == [("tool", "(trimmed)"), ("assistant", "ok")]


def test_pi_own_messages_are_read_as_pi_sends_them() -> None:
    w = Writer()
    w.entry("message", message={"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 2,
                                "cancelled": False, "truncated": False, "timestamp": 1})
    w.entry("message", message={"role": "bashExecution", "command": "secret", "output": "x", "exitCode": 0,
                                "excludeFromContext": True, "timestamp": 2})
    w.entry("custom_message", customType="ext", content="from an extension", display=True)
    w.entry("message", message={"role": "user", "content": [
        {"type": "text", "text": "see"}, {"type": "image", "data": "iVBO", "mimeType": "image/png"}]})
    w.entry("model_change", provider="openai", modelId="gpt-5")
    w.reply(text="seen", stop="stop", api="openai-completions")
    session = read_text(w.text())
    assert [m.content for m in session.messages[:2]] == ["Ran `ls`\n```\na\n```\n\nCommand exited with code 2",
                                                         "from an extension"]
    assert session.messages[2].content == (TextPart(text="see"), ImagePart(media_type="image/png", data="iVBO"))
    assert (session.provider, session.model) == ("openai_chat", "m-1")


def test_a_version_1_session_is_a_list_and_a_torn_last_line_is_skipped() -> None:
    records: list[dict[str, Any]] = [{"type": "session", "id": "s", "timestamp": "t", "cwd": "/"},
                                     {"type": "message", "message": {"role": "user", "content": "go"}},
                                     {"type": "message", "message": {"role": "assistant", "stopReason": "toolUse",
                                      "content": [{"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}}]}}]
    text = "".join(lines_of(records)) + '{"type":"message","message":{"role":"toolRes'
    session = read_text(text, "pi")
    assert any("torn last line" in w for w in session.warnings)
    result, chunks = session.repaired(None)
    out = "".join(chunks).splitlines()
    assert [c.id for c in result.interrupted] == ["c1"] and len(out) == 4
    assert "parentId" not in json.loads(out[3]) and json.loads(out[3])["message"]["toolCallId"] == "c1"


def test_what_pi_cannot_read_is_said_where_it_is() -> None:
    with pytest.raises(InputError, match="not a pi session header"):
        read_text('{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}\n', "pi")
    w = Writer()
    w.user("go")
    w.records[1]["parentId"] = w.leaf  # a loop
    with pytest.raises(InputError, match="loop") as caught:
        read_text(w.text(), "pi")
    assert caught.value.line == 2
    w = Writer()
    w.entry("message", message={"role": "assistant", "stopReason": "stop", "content": [
        {"type": "toolCall", "id": "c", "name": "x", "arguments": [1]}]})
    with pytest.raises(InputError, match=r"message.content\[0\].arguments: expected an object") as caught:
        read_text(w.text(), "pi")
    assert caught.value.line == 2


def pi_records(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """A neutral history as pi writes it: a header, a model change, then one message entry a message."""
    w = Writer()
    w.entry("model_change", provider="anthropic", modelId="m-1")
    for m in history:
        parts = (TextPart(text=m.content),) if isinstance(m.content, str) else m.content
        blocks: list[dict[str, Any]] = []
        for p in parts:
            if isinstance(p, TextPart):
                blocks.append({"type": "text", "text": p.text})
            elif isinstance(p, ImagePart) and p.data:
                blocks.append({"type": "image", "data": p.data, "mimeType": p.media_type})
        if m.role == "assistant":
            blocks = [b for b in blocks if b["type"] == "text" and b["text"]]
            blocks += [{"type": "toolCall", "id": c.id, "name": c.name, "arguments": c.arguments}
                       for c in m.tool_calls]
            w.entry("message", message={"role": "assistant", "content": blocks, "api": "anthropic-messages",
                                        "stopReason": "toolUse" if m.tool_calls else "stop", "timestamp": 1})
        elif m.role == "tool":
            w.entry("message", message={"role": "toolResult", "toolCallId": m.tool_call_id, "toolName": m.tool_name,
                                        "content": blocks, "isError": m.is_error, "timestamp": 1})
        else:
            w.entry("message", message={"role": m.role, "content": blocks, "timestamp": 1})
    return w.records


@examples(50)
@given(valid_histories())
def test_a_healthy_generated_session_checks_clean_and_repairs_to_the_same_bytes(history: list[ChatMessage]) -> None:
    if any(isinstance(c.arguments, str) for m in history for c in m.tool_calls):
        history = [replace(m, tool_calls=tuple(replace(c, arguments={})
                                                            for c in m.tool_calls)) for m in history]
    text = "".join(lines_of(pi_records(history)))
    session = read_text(text)
    assert session.format == "pi"
    assert [m.tool_call_id for m in session.messages] == [m.tool_call_id for m in history]
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    if not result.changed:
        assert "".join(chunks) == text


# --- where pi and OpenClaw keep sessions ------------------------------------------------------------------------


def test_the_default_locations_honour_home_and_the_tools_variables(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path)}
    assert pi.default_locations(home) == [tmp_path / ".pi" / "agent" / "sessions"]
    assert pi.default_locations({**home, "PI_CODING_AGENT_DIR": "~/agent"}) == [tmp_path / "agent" / "sessions"]
    assert pi.default_locations({**home, "PI_CODING_AGENT_SESSION_DIR": "/s"}) == [Path("/s")]
    (tmp_path / ".openclaw" / "agents" / "main" / "sessions").mkdir(parents=True)
    (tmp_path / "state" / "agents" / "ops").mkdir(parents=True)
    assert pi.openclaw_locations(home) == [tmp_path / ".openclaw" / "agents" / "main" / "sessions"]
    assert pi.openclaw_locations({**home, "OPENCLAW_STATE_DIR": str(tmp_path / "state")}) == [
        tmp_path / "state" / "agents" / "ops" / "sessions"]
    assert pi.openclaw_locations({"HOME": "/nowhere", "OPENCLAW_HOME": str(tmp_path)}) == [
        tmp_path / ".openclaw" / "agents" / "main" / "sessions"]


def _seed(home: Path) -> Iterator[Path]:
    w = Writer()
    w.user("go")
    w.reply("c1")
    for path in (home / ".pi" / "agent" / "sessions" / "--work-p--" / "2026-01-01T00-00-00-000Z_0198-aa.jsonl",
                 home / ".openclaw" / "agents" / "main" / "sessions" / "0198-bb.jsonl"):
        path.parent.mkdir(parents=True)
        path.write_text(w.text(), encoding="utf-8")
        path.with_name("sessions.json").write_text("{}", encoding="utf-8")
        os.utime(path, (HOUR_AGO, HOUR_AGO))
        yield path


def test_doctor_finds_and_fixes_pi_and_openclaw_sessions_in_a_fake_home(tmp_path: Path) -> None:
    pi_path, claw_path = _seed(tmp_path)
    assert pi.is_session_file(pi_path) and not pi.is_session_file(pi_path.with_name("sessions.json"))
    env = {"HOME": str(tmp_path)}
    found = {f.tool: f for f in doctor(env=env, workers=1)}
    assert set(found) == {"pi", "OpenClaw"} and {f.status for f in found.values()} == {"broken"}
    assert found["pi"].resume == f"pi --session {pi_path}" and found["pi"].session == "0198-aa"
    assert found["OpenClaw"].resume == "openclaw agent --agent main --session-id 0198-bb"
    assert all("R6" in f.problems[0] for f in found.values())
    assert {f.status for f in doctor(env=env, fix=True, workers=1)} == {"fixed"}
    assert {f.status for f in doctor(env=env, workers=1)} == {"ok"}
    assert json.loads(claw_path.read_text(encoding="utf-8").splitlines()[-1])["message"]["role"] == "toolResult"
