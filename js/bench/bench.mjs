// The TypeScript package's speed: repairHistory on the 20,000-message messy history, and repairBody on messy
// OpenAI Chat and Anthropic bodies of 1,000 and 10,000 messages, each beside the floor of JSON.parse +
// JSON.stringify of the same input (the target: at most that floor), and pi's repair (transformMessages of
// @earendil-works/pi-ai, exported as its api/transform-messages module) on the same history where installed.
//
//   cd js && npm run build && (cd bench && npm ci) && node bench/bench.mjs [--runs 15] [--warm-ms 500]
//
// The workloads are the Python bench's (bench/workloads.py), written by dump_workloads.py. Each figure is the
// median of `--runs` timed runs, in one process, after warm-up runs for `--warm-ms` milliseconds (500; five runs at
// least): the JIT's optimized code is timed, as the floor's is JSON's native code.

import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { repairBody, repairHistory } from "../dist/index.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const PYTHON = fileURLToPath(new URL("../../.venv/bin/python", import.meta.url));
const runsAt = process.argv.indexOf("--runs");
const RUNS = runsAt > 0 ? Number(process.argv[runsAt + 1]) : 15;
const warmAt = process.argv.indexOf("--warm-ms");
const WARM_MS = warmAt > 0 ? Number(process.argv[warmAt + 1]) : 500;

function median(fn) {
  const warmUntil = performance.now() + WARM_MS;
  for (let k = 0; k < 5 || performance.now() < warmUntil; k++) fn();
  const times = [];
  for (let k = 0; k < RUNS; k++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

function row(what, ms, floorMs, extra = "") {
  const ratio = floorMs === undefined ? "" : `${(ms / floorMs).toFixed(2)}x the floor`;
  console.log(`${what.padEnd(44)} ${ms.toFixed(2).padStart(9)} ms   ${ratio} ${extra}`);
}

/** The 20k history in pi's own message shapes (user, assistant with toolCall blocks, toolResult). */
function asPi(history) {
  const base = { api: "anthropic-messages", provider: "anthropic", model: "claude", stopReason: "toolUse" };
  return history.map((m) => {
    const text = typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("\n");
    if (m.role === "assistant") {
      const content = [{ type: "text", text }];
      for (const c of m.tool_calls ?? []) content.push({ type: "toolCall", id: c.id, name: c.name, arguments: c.arguments });
      return { ...base, role: "assistant", content, timestamp: 0 };
    }
    if (m.role === "tool") {
      return { role: "toolResult", toolCallId: m.tool_call_id, toolName: m.tool_name ?? "", content: [{ type: "text", text }], isError: false, timestamp: 0 };
    }
    return { role: m.role === "system" ? "user" : m.role, content: text, timestamp: 0 };
  });
}

const workloads = JSON.parse(
  execFileSync(PYTHON, [`${HERE}dump_workloads.py`], { encoding: "utf8", maxBuffer: 1 << 28 }),
);
console.log(`node ${process.version}, median of ${RUNS} runs after ${WARM_MS} ms of warm-up runs\n`);

const history = workloads.history_20k;
const historyText = JSON.stringify(history);
const historyFloor = median(() => JSON.stringify(JSON.parse(historyText)));
row("JSON.parse + JSON.stringify, 20k history", historyFloor);
const repaired = repairHistory(history);
row("repairHistory, 20k history", median(() => repairHistory(history)), historyFloor,
  `(${repaired.interrupted.length} interrupted, ${repaired.notes.length} notes, ${repaired.renamed.length} renamed)`);

let transformMessages;
try {
  ({ transformMessages } = await import("@earendil-works/pi-ai/api/transform-messages"));
} catch {
  console.log("pi's transformMessages: not installed (cd js/bench && npm ci)");
}
if (transformMessages) {
  const pi = asPi(history);
  const model = { api: "anthropic-messages", provider: "anthropic", id: "claude", input: ["text", "image"] };
  row("pi transformMessages, 20k history", median(() => transformMessages(pi, model)), historyFloor,
    "(answers missing calls only: no move, note or rename)");
}
console.log("");

for (const [name, body] of Object.entries(workloads.bodies)) {
  const [provider] = name.split(" ");
  const text = JSON.stringify(body);
  const floor = median(() => JSON.stringify(JSON.parse(text)));
  row(`JSON.parse + JSON.stringify, ${name}`, floor);
  const result = repairBody(provider, body);
  row(`repairBody, ${name}`, median(() => repairBody(provider, body)), floor,
    `(${result.rewritten.length} items rewritten, ${result.report.interrupted.length} interrupted)`);
}
