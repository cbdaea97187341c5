// Every history case of the conformance suite: the same output and report as the Python library, byte for byte.
import assert from "node:assert/strict";
import { test } from "node:test";
import { canonicalMessage, HistoryError, repairHistory } from "../dist/index.js";
import { canonical, load, options } from "./support/vectors.mjs";

function call(c) {
  return canonicalMessage({ role: "assistant", content: "", tool_calls: [c] }).tool_calls[0];
}

function report(result) {
  return {
    messages: result.messages.map(canonicalMessage),
    interrupted: result.interrupted.map(call),
    interrupted_at: result.interruptedAt,
    dropped: result.dropped,
    moved: result.moved,
    notes: result.notes,
    renamed: result.renamed.map((r) => [r.messageIndex, r.callIndex, r.old, r.new]),
    final_ids: result.finalIds,
    stripped: result.stripped.map(call),
    stripped_at: result.strippedAt,
  };
}

for (const path of ["history/rules.json", "history/errors.json", "history/generated.json.gz"]) {
  test(`conformance ${path}`, () => {
    const cases = load(path);
    assert.ok(cases.length > 0);
    for (const c of cases) {
      const frozen = structuredClone(c.input);
      if (c.error) {
        assert.throws(() => repairHistory(c.input, options(c.options)), (error) => {
          assert.ok(error instanceof HistoryError, c.name);
          assert.deepEqual({ index: error.index, field: error.field }, c.error, c.name);
          return true;
        });
        continue;
      }
      const result = repairHistory(c.input, options(c.options));
      assert.equal(canonical(report(result)), canonical(c.expected), c.name);
      assert.deepEqual(c.input, frozen, `${c.name}: the input is not mutated`);
      const again = repairHistory(result.messages, options(c.options));
      assert.equal(canonical(again.messages.map(canonicalMessage)), canonical(c.expected.messages), `${c.name}: idempotent`);
    }
  });
}

test("kept messages are the input's own objects", () => {
  const history = [
    { role: "user", content: "hi" },
    { role: "assistant", content: "", tool_calls: [{ id: "a", name: "search", arguments: {} }] },
    { role: "user", content: "steer" },
  ];
  const result = repairHistory(history, { isReadOnly: (name) => name === "search" });
  assert.equal(result.messages[0], history[0]);
  assert.equal(result.messages[1], history[1]);
  assert.equal(result.messages[3], history[2]);
  assert.match(result.messages[2].content, /only reads/);
  assert.deepEqual(result.interrupted.map((c) => c.id), ["a"]);
});

test("an exception of isReadOnly propagates", () => {
  const history = [{ role: "assistant", content: "", tool_calls: [{ id: "a", name: "s" }] }];
  assert.throws(() => repairHistory(history, { isReadOnly: () => { throw new Error("boom"); } }), /boom/);
});

test("prefix-stable: a history cut before a kept assistant message repairs to the first messages of the whole", () => {
  let checked = 0;
  for (const c of load("history/generated.json.gz")) {
    if (c.error || c.options.leave_open_last) continue;
    const whole = repairHistory(c.input, options(c.options)).messages.map((m) => canonical(canonicalMessage(m)));
    c.input.forEach((message, i) => {
      const content = message.content;
      const blank = typeof content === "string" ? !content.trim() : content.every((p) => p.type === "text" && !p.text.trim());
      if (message.role !== "assistant" || (blank && !(message.tool_calls ?? []).length)) return;
      const prefix = repairHistory(c.input.slice(0, i), options(c.options)).messages.map((m) => canonical(canonicalMessage(m)));
      assert.deepEqual(prefix, whole.slice(0, prefix.length), `${c.name} at ${i}`);
      checked += 1;
    });
  }
  assert.ok(checked > 1000);
});
