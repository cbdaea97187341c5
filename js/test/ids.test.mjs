// The id cases of the conformance suite: rule 5's final ids in history order, and normalizeToolId (its digest is
// SHA-256, written in the package: checked against node:crypto too).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { FinalIds, normalizeToolId } from "../dist/index.js";
import { sha256Hex } from "../dist/ids.js";
import { load } from "./support/vectors.mjs";

test("conformance ids.json", () => {
  const cases = load("ids.json");
  for (const c of cases.final_ids) {
    const ids = new FinalIds();
    assert.deepEqual(c.allocate.map(([id, m, k]) => ids.allocate(id, m, k)), c.expected);
  }
  for (const c of cases.normalize_tool_id) assert.equal(normalizeToolId(c.id, c.max_length), c.expected, c.id);
});

test("sha256 agrees with node:crypto", () => {
  for (const size of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
    const data = new Uint8Array(size).map((_, k) => (k * 31 + size) & 0xff);
    assert.equal(sha256Hex(data), createHash("sha256").update(data).digest("hex"), `size ${size}`);
  }
});

test("an empty id gets a random call id of its length", () => {
  assert.match(normalizeToolId("", 20), /^call_[0-9a-f]{15}$/);
});
