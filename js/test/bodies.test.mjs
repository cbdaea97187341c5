// Every body case of the conformance suite: the same body, rewritten items and report as the Python library, byte
// for byte; items not rewritten are the input's own objects; `check` finds the same problems, and the same are left
// after repair.
import assert from "node:assert/strict";
import { test } from "node:test";
import { check, PROVIDERS, repairBody, UnsupportedBodyError } from "../dist/index.js";
import { REFUSED } from "./support/refused.mjs";
import { canonical, load, options } from "./support/vectors.mjs";

const CHECKED = PROVIDERS;
const LIST_KEY = { anthropic: "messages", openai_chat: "messages", openai_responses: "input", gemini: "contents" };

for (const provider of PROVIDERS) {
  test(`conformance bodies/${provider}`, () => {
    const counts = { cases: 0, neutral: 0, refused: 0 };
    const refused = new Set(REFUSED[provider] ?? []);
    for (const c of load(`bodies/${provider}.json.gz`)) {
      if (refused.has(c.name)) {
        assert.throws(() => repairBody(provider, c.input, options(c.options)), UnsupportedBodyError, c.name);
        counts.refused += 1;
        continue;
      }
      const expected = c.expected;
      const repaired = repairBody(provider, c.input, options(c.options));
      counts.cases += 1;
      assert.equal(canonical(repaired.body), canonical(expected.body), c.name);
      if (expected.route === "neutral") counts.neutral += 1;
      assert.deepEqual(repaired.rewritten, expected.rewritten, c.name);
      assert.equal(repaired.changed, expected.changed, c.name);
      assert.equal(canonical(repaired.report), canonical(expected.report), c.name);
      assert.deepEqual(repaired.mended, expected.mended, `${c.name}: the strings mended`);
      const items = c.input[LIST_KEY[provider]];
      repaired.body[LIST_KEY[provider]].forEach((item, k) => {
        if (!repaired.rewritten.includes(k)) assert.ok(items.includes(item), `${c.name}: item ${k} is the input's own`);
      });
    }
    assert.equal(counts.refused, refused.size, "every refusal names a case");
    console.log(
      `${provider}: ${counts.cases} cases byte for byte (${counts.neutral} of them by Python's neutral route), ` +
        `${counts.refused} refused by name`,
    );
  });
}

for (const provider of CHECKED) {
  test(`conformance check bodies/${provider}`, () => {
    let judged = 0;
    for (const c of load(`bodies/${provider}.json.gz`)) {
      const problems = check(provider, c.input);
      judged += 1;
      const got = problems.map(({ code, path, message }) => ({ code, path, message }));
      assert.equal(canonical(got), canonical(c.expected.check), c.name);
      if (REFUSED[provider]?.includes(c.name)) continue; // (no repaired body to judge)
      const left = check(provider, repairBody(provider, c.input).body).map((problem) => problem.code);
      assert.deepEqual(left, c.expected.check_repaired, `${c.name}: what is left after repair`);
    }
    assert.ok(judged > 0);
  });
}

test("repairBody never changes its input", () => {
  for (const provider of PROVIDERS) {
    for (const c of load(`bodies/${provider}.json.gz`)) {
      if (REFUSED[provider]?.includes(c.name)) continue;
      const before = canonical(c.input);
      repairBody(provider, c.input, options(c.options));
      assert.equal(canonical(c.input), before, c.name);
    }
  }
});

test("parts and blocks chatmend does not model ride along: the input's own objects, checked as Python checks them", () => {
  const taken = [
    ["gemini", { contents: [{ role: "user", parts: [{ text: "hi" }] }, { role: "model", parts: [{ text: "x", thoughtSignature: "c2ln" }] }] }],
    ["gemini", { contents: [{ parts: [{ inlineData: { mimeType: "image/png", data: "AA==" } }] }] }],
    ["gemini", { model: "gemini-3-pro", contents: [{ role: "user", parts: [{ text: "hi" }] }] }],
    ["anthropic", { model: "m", max_tokens: 5, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }, { type: "text", text: "x" }] }] }],
  ];
  for (const [provider, body] of taken) {
    const repaired = repairBody(provider, body);
    const key = LIST_KEY[provider];
    assert.equal(repaired.changed, false, provider);
    for (const [k, item] of repaired.body[key].entries()) assert.equal(item, body[key][k], provider);
    assert.ok(Array.isArray(check(provider, body)), provider);
  }
});

test("a client call other than a function, cut off, is answered in its own output type, as Python's writer answers it", () => {
  const body = { model: "m", input: [
    { role: "user", content: "hi" },
    { type: "computer_call", call_id: "c1", action: { type: "screenshot" }, pending_safety_checks: [], status: "completed" },
    { type: "shell_call", call_id: "s1", action: { commands: ["ls"] }, status: "completed" },
  ] };
  const repaired = repairBody("openai_responses", body);
  assert.deepEqual(repaired.report.interrupted, ["c1", "s1"]);
  const [screenshot, shell] = repaired.body.input.slice(3);
  assert.equal(screenshot.type, "computer_call_output");
  assert.match(screenshot.output.image_url, /^data:image\/png;base64,/); // (a blank screenshot: there is no image)
  assert.equal(shell.type, "shell_call_output");
  assert.deepEqual(shell.output[0].outcome, { type: "exit", exit_code: 1 });
  assert.deepEqual(check("openai_responses", repaired.body), []);
});

test("a Gemini response without an id answering out of position is answered as Python answers it", () => {
  const contents = [
    { role: "user", parts: [{ text: "hi" }] },
    { role: "model", parts: [{ functionCall: { name: "a", args: {} } }, { functionCall: { name: "b", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { name: "b", response: { output: "2" } } }] },
    { role: "user", parts: [{ text: "go on" }] },
  ];
  const repaired = repairBody("gemini", { contents });
  // the response reads as the first call's (GE1: by position), so the second is answered as interrupted
  assert.deepEqual(repaired.report.interrupted, ["~gemini:1.1"]);
  assert.equal(repaired.body.contents[0], contents[0]);
  assert.equal(repaired.body.contents[1], contents[1]);
  assert.equal(repaired.body.contents.at(-1), contents[3]);
  const answers = repaired.body.contents[2].parts.map((part) => part.functionResponse);
  assert.deepEqual(answers.map((r) => [r.name, "id" in r, Object.keys(r.response)[0]]), [["a", false, "output"], ["b", false, "error"]]);
  assert.deepEqual(check("gemini", repaired.body), []);
});

test("Gemini's check on Vertex AI: a content without a role (GE7) and call ids (GE8) are refused there, as Python says", () => {
  const body = { contents: [
    { parts: [{ text: "hi" }] },
    { role: "model", parts: [{ functionCall: { id: "a", name: "f", args: {} } }] },
    { role: "user", parts: [{ functionResponse: { id: "a", name: "f", response: { output: "ok" } } }] },
  ] };
  assert.deepEqual(check("gemini", body), []);
  const onVertex = check("gemini", body, { platform: "vertex" });
  assert.deepEqual(onVertex.map((p) => [p.code, p.path]), [
    ["GE7", "contents[0].role"],
    ["GE8", "contents[1].parts[0].functionCall.id"],
    ["GE8", "contents[2].parts[0].functionResponse.id"],
  ]);
  assert.equal(onVertex[1].message, `Invalid JSON payload received. Unknown name "id" at 'contents[1].parts[0].function_call': Cannot find field.`);
  // the model named beside the body rules as the body's own would (GE4 from Gemini 3 on)
  assert.deepEqual(check("gemini", body, { model: "gemini-3-pro-preview" }).map((p) => p.code), ["GE4"]);
});

test("repairBody says where it mended lone surrogates, as Python's BodyRepair.mended does", () => {
  const body = { model: "m", x_note: "\uDE00", messages: [{ role: "user", content: "hi \uD83D", "k\uD83D": 1 }] };
  const repaired = repairBody("openai_chat", body);
  assert.deepEqual(repaired.mended, ["x_note", "messages[0] key 'k\\ud83d'", "messages[0].content"]); // (Python's)
  assert.equal(repaired.body.messages[0].content, "hi \uFFFD");
  assert.deepEqual(repaired.mended, check("openai_chat", body).map((problem) => problem.path));
  assert.deepEqual(repairBody("openai_chat", { model: "m", messages: [{ role: "user", content: "hi" }] }).mended, []);
});

test("a legacy function call is answered by a function message, as Python's Chat writer answers it", () => {
  const asks = { role: "assistant", content: null, function_call: { name: "search", arguments: "{}" } };
  const repaired = repairBody("openai_chat", { model: "m", messages: [{ role: "user", content: "hi" }, asks] });
  assert.deepEqual(repaired.report.interrupted, ["call_1_0"]); // (the id Python's reader gives a legacy call)
  assert.equal(repaired.body.messages[1], asks);
  assert.deepEqual(Object.keys(repaired.body.messages[2]).sort(), ["content", "name", "role"]);
  assert.equal(repaired.body.messages[2].role, "function");
  // a function message named otherwise than its call answers it: kept as it is, or named after it where written anew
  const misnamed = { role: "function", name: "other", content: "ok" };
  const answered = { model: "m", messages: [asks, misnamed] };
  assert.equal(repairBody("openai_chat", answered).body.messages[1], misnamed);
  const both = { ...asks, tool_calls: [{ id: "a1", type: "function", function: { name: "f", arguments: "{}" } }] };
  const result = { role: "tool", tool_call_id: "a1", content: "x" };
  const later = { role: "assistant", content: null, tool_calls: [{ id: "b1", type: "function", function: { name: "f", arguments: "{}" } }] };
  const reused = { model: "m", messages: [both, result, misnamed, { role: "user", content: "go" }, both, result, misnamed, later] };
  const renamed = repairBody("openai_chat", reused).body.messages;
  assert.equal(renamed[2], misnamed);
  assert.deepEqual([renamed[4].tool_calls[0].id, renamed[5].tool_call_id, renamed[6].name], ["a1_1", "a1_1", "search"]);
});

test("a malformed Chat message is judged by its shape, as Python's checker judges it, and refused where Python's reader refuses it", () => {
  const asks = { role: "assistant", content: null, tool_calls: [{ id: "a1", type: "function", function: { name: "f", arguments: "{}" } }] };
  const bare = { model: "m", messages: [{ role: "user", content: [{ type: "image_url", image_url: "https://x/y.png" }] }, asks] };
  assert.deepEqual(check("openai_chat", bare).map((p) => [p.code, p.path]), [["SHAPE", "messages[0].content[0].image_url"]]);
  assert.deepEqual(repairBody("openai_chat", bare).report.interrupted, ["a1"]); // (the reader takes a bare URL)
  const untyped = { model: "m", messages: [{ role: "user", content: [{ text: "x" }] }, asks] };
  assert.deepEqual(check("openai_chat", untyped).map((p) => p.message), ["expected a content part object"]);
  assert.throws(() => repairBody("openai_chat", untyped), UnsupportedBodyError); // (Python's reader: ReadError)
  const bot = { model: "m", messages: [{ role: "bot\u200b", content: "hi" }] };
  assert.deepEqual(check("openai_chat", bot).map((p) => p.message), ["unknown role 'bot\\u200b'"]);
});

test("a list holding one item object twice repairs as its JSON copy (bodies built in code may share one)", () => {
  const outcome = (provider, body) => {
    try {
      return canonical(repairBody(provider, body).body);
    } catch (error) {
      return String(error);
    }
  };
  for (const provider of PROVIDERS) {
    let n = 0;
    for (const c of load(`bodies/${provider}.json.gz`)) {
      const items = c.input[LIST_KEY[provider]];
      if (!Array.isArray(items) || items.length < 2 || REFUSED[provider]?.includes(c.name)) continue;
      n += 1;
      const twice = items[n % items.length];
      const shared = { ...c.input, [LIST_KEY[provider]]: [...items.slice(0, 2), twice, ...items.slice(2)] };
      assert.equal(outcome(provider, shared), outcome(provider, JSON.parse(JSON.stringify(shared))), c.name);
    }
    assert.ok(n > 0, provider);
  }
});
