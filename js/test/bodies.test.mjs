// Every body case of the conformance suite that the stub route repairs: the same body, rewritten items and report
// as the Python library, byte for byte; items not rewritten are the input's own objects. A body the Python library
// repairs through the neutral model is refused by name (UnsupportedBodyError).
import assert from "node:assert/strict";
import { test } from "node:test";
import { check, PROVIDERS, repairBody, UnsupportedBodyError } from "../dist/index.js";
import { canonical, load, options } from "./support/vectors.mjs";

const CHECKED = PROVIDERS;
const LIST_KEY = { anthropic: "messages", openai_chat: "messages", openai_responses: "input", gemini: "contents" };

for (const provider of PROVIDERS) {
  test(`conformance bodies/${provider}`, () => {
    const counts = { stubs: 0, neutral: 0, neutralWritten: 0 };
    for (const c of load(`bodies/${provider}.json.gz`)) {
      const expected = c.expected;
      let repaired;
      try {
        repaired = repairBody(provider, c.input, options(c.options));
      } catch (error) {
        assert.ok(error instanceof UnsupportedBodyError, `${c.name}: ${error}`);
        assert.equal(expected.route, "neutral", `${c.name}: the stub route takes it in Python (${error.message})`);
        counts.neutral += 1;
        continue;
      }
      counts.stubs += 1;
      assert.equal(canonical(repaired.body), canonical(expected.body), c.name);
      if (expected.route === "neutral") {
        // Python wrote the body through its neutral model (the adapter has no hook for a step the package writes):
        // the same bytes, and no item rewritten that Python did not rewrite
        assert.ok(repaired.rewritten.every((k) => expected.rewritten.includes(k)), `${c.name}: rewritten`);
        counts.neutralWritten += 1;
      } else {
        assert.deepEqual(repaired.rewritten, expected.rewritten, c.name);
      }
      assert.equal(repaired.changed, expected.changed, c.name);
      assert.equal(canonical(repaired.report), canonical(expected.report), c.name);
      const items = c.input[LIST_KEY[provider]];
      repaired.body[LIST_KEY[provider]].forEach((item, k) => {
        if (!repaired.rewritten.includes(k)) assert.ok(items.includes(item), `${c.name}: item ${k} is the input's own`);
      });
    }
    assert.ok(counts.stubs > 0);
    console.log(`${provider}: ${counts.stubs} cases byte for byte (${counts.neutralWritten} of them by Python's neutral ` +
      `route), ${counts.neutral} refused`);
  });
}

for (const provider of CHECKED) {
  test(`conformance check bodies/${provider}`, () => {
    let judged = 0;
    for (const c of load(`bodies/${provider}.json.gz`)) {
      let problems;
      try {
        problems = check(provider, c.input);
      } catch (error) {
        assert.ok(error instanceof UnsupportedBodyError, `${c.name}: ${error}`);
        assert.equal(c.expected.route, "neutral", `${c.name}: check refuses a body the stubs take`);
        continue;
      }
      judged += 1;
      const got = problems.map(({ code, path, message }) => ({ code, path, message }));
      assert.equal(canonical(got), canonical(c.expected.check), c.name);
      if (c.expected.route === "stubs") {
        const left = check(provider, repairBody(provider, c.input).body).map((problem) => problem.code);
        assert.deepEqual(left, c.expected.check_repaired, `${c.name}: what is left after repair`);
      }
    }
    assert.ok(judged > 0);
  });
}
