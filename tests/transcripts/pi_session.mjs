// Sessions written and read by pi's own session manager (pi-coding-agent's dist/core/session-manager.js), for
// tests/transcripts/test_pi.py. Usage:
//   node pi_session.mjs PACKAGE_DIR write SESSION_DIR SCENARIO   -> prints the session file's path
//   node pi_session.mjs PACKAGE_DIR context SESSION_FILE          -> prints the messages pi's loader builds, as JSON
//   node pi_session.mjs PACKAGE_DIR sent SESSION_FILE             -> the same after pi-ai's transformMessages (what
//                                                                    pi sends to an Anthropic model on resume)
// Only the session manager and the message conversion are imported (the package's index needs a newer node).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [packageDir, command, target, scenario] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(join(packageDir, "dist", "core", file)).href);
const { SessionManager } = await load("session-manager.js");
const { convertToLlm } = await load("messages.js");

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
let clock = 1767225600000;
const now = () => (clock += 1000);
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: now() });
const assistant = (content, stopReason = "toolUse") => ({
  role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5",
  usage, stopReason, timestamp: now(),
});
const call = (id, command) => ({ type: "toolCall", id, name: "bash", arguments: { command } });
const result = (id, text) => ({
  role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }],
  details: { exitCode: 0 }, isError: false, timestamp: now(),
});

function write(dir, name) {
  const session = SessionManager.create("/work/project", dir);
  session.appendModelChange("anthropic", "claude-sonnet-4-5");
  session.appendThinkingLevelChange("medium");
  session.appendMessage(user("count the files in a and b"));
  session.appendMessage(assistant([
    { type: "thinking", thinking: "two listings", thinkingSignature: "sig-1" },
    { type: "text", text: "Listing both." },
    call("toolu_01", "ls a | wc -l"), call("toolu_02", "ls b | wc -l"),
  ]));
  session.appendMessage(result("toolu_01", "3"));
  if (name !== "killed") session.appendMessage(result("toolu_02", "4"));
  if (name === "killed") {
    // pi was killed while toolu_02 ran; resumed, the next prompt hangs off the unanswered call
    session.appendMessage(user("go on"));
  }
  const answer = session.appendMessage(assistant([{ type: "text", text: "7 files." }], "stop"));
  if (name === "branched") {
    // a branch abandoned: /tree back to the answer, then a new prompt from there
    session.appendMessage(user("now list c"));
    session.appendMessage(assistant([call("toolu_03", "ls c")]));
    session.appendMessage(result("toolu_03", "1"));
    session.branch(answer);
    session.appendLabelChange(answer, "counted");
  }
  session.appendMessage(user("and the hidden ones?"));
  session.appendMessage(assistant([call("toolu_04", "ls -a a b | wc -l")]));
  if (name !== "killed-last") session.appendMessage(result("toolu_04", "11"));
  if (name !== "killed-last") session.appendMessage(assistant([{ type: "text", text: "11 entries." }], "stop"));
  return session.getSessionFile();
}

if (command === "write") {
  console.log(write(target, scenario));
} else if (command === "context") {
  const session = SessionManager.open(target);
  console.log(JSON.stringify(convertToLlm(session.buildSessionContext().messages)));
} else if (command === "sent") {
  const ai = join(packageDir, "..", "pi-ai", "dist", "api", "transform-messages.js");
  const { transformMessages } = await import(pathToFileURL(ai).href);
  const session = SessionManager.open(target);
  const model = { provider: "anthropic", api: "anthropic-messages", id: "claude-sonnet-4-5", input: ["text"] };
  console.log(JSON.stringify(transformMessages(convertToLlm(session.buildSessionContext().messages), model)));
} else {
  console.error(`unknown command ${command}`);
  process.exit(2);
}
