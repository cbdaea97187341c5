// The conformance vectors (../conformance), read as the Python tests read them, and the canonical form both
// sides compare in: JSON with every object's keys sorted.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { sortedJson } from "../../dist/index.js";

const ROOT = new URL("../../../conformance/", import.meta.url);

export function load(path) {
  const data = readFileSync(new URL(path, ROOT));
  return JSON.parse((path.endsWith(".gz") ? gunzipSync(data) : data).toString("utf8"));
}

export function canonical(value) {
  return JSON.stringify(sortedJson(value));
}

export function options(caseOptions = {}) {
  const out = {};
  if (caseOptions.read_only) {
    const names = new Set(caseOptions.read_only);
    out.isReadOnly = (name) => names.has(name);
  }
  if (caseOptions.wording) out.wording = caseOptions.wording;
  if (caseOptions.leave_open_last) out.leaveOpenLast = true;
  if (caseOptions.on_missing) out.onMissing = caseOptions.on_missing;
  if (caseOptions.mark) out.mark = caseOptions.mark;
  return out;
}
