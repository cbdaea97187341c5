// The AI SDK bridge in the SDK's own loop: generateText with its mock model and a history holding a tool call
// with no result (which the SDK refuses with MissingToolResultsError), repaired by chatmendPrepareStep.
import assert from "node:assert/strict";
import { test } from "node:test";
import { generateText, MissingToolResultsError, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { chatmendMiddleware, chatmendPrepareStep, repairModelMessages } from "../dist/ai-sdk.js";

const history = [
  { role: "user", content: "list the files" },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Looking." },
      { type: "tool-call", toolCallId: "c1", toolName: "ls", input: {} },
      { type: "tool-call", toolCallId: "c2", toolName: "rm", input: { path: "x" } },
    ],
  },
  { role: "tool", content: [{ type: "tool-result", toolCallId: "c2", toolName: "rm", output: { type: "text", value: "gone" } }] },
  { role: "user", content: "go on" },
];

function model(seen) {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options.prompt);
      return {
        content: [{ type: "text", text: "Done." }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      };
    },
  });
}

test("the SDK refuses the history as it is", async () => {
  await assert.rejects(generateText({ model: model([]), messages: history }), (error) =>
    MissingToolResultsError.isInstance(error),
  );
});

test("chatmendPrepareStep repairs it in the SDK's loop", async () => {
  const seen = [];
  const result = await generateText({
    model: model(seen),
    messages: history,
    prepareStep: chatmendPrepareStep({ isReadOnly: (name) => name === "ls" }),
  });
  assert.equal(result.text, "Done.");
  const tool = seen[0].find((message) => message.role === "tool");
  assert.deepEqual(
    tool.content.map((part) => part.toolCallId),
    ["c1", "c2"],
  );
  assert.match(JSON.stringify(tool.content[0].output), /only reads/);
});

test("repairModelMessages keeps what it leaves alone", () => {
  const repaired = repairModelMessages(history);
  assert.deepEqual(repaired.interrupted, ["c1"]);
  assert.equal(repaired.messages[0], history[0]);
  assert.equal(repaired.messages[1], history[1]);
  assert.equal(repaired.messages[2].content[0].toolCallId, "c1");
  assert.equal(repaired.messages[3], history[2]);
  assert.equal(repaired.messages[4], history[3]);
  const valid = repairModelMessages(repaired.messages);
  assert.equal(valid.changed, false);
  const orphan = repairModelMessages([history[0], history[2]]);
  assert.equal(orphan.messages[1].role, "user");
  assert.match(orphan.messages[1].content[0].text, /no matching tool call \(tool: rm, id: c2, error: no\)/);
});

test("chatmendMiddleware repairs the prompt a wrapped model is called with", async () => {
  const seen = [];
  const wrapped = wrapLanguageModel({ model: model(seen), middleware: chatmendMiddleware() });
  const prompt = [
    { role: "user", content: [{ type: "text", text: "list" }] },
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "ls", input: "{}" }] },
    { role: "user", content: [{ type: "text", text: "go on" }] },
  ];
  await wrapped.doGenerate({ prompt });
  assert.deepEqual(
    seen[0].map((message) => message.role),
    ["user", "assistant", "tool", "user"],
  );
  assert.equal(seen[0][2].content[0].output.type, "error-text");
});
