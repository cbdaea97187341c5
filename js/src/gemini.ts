/**
 * Gemini's neutral route for `repairBody` (the port of Python's `providers/gemini/read.py`, `write.py` and the
 * adapter's `_rebuild`), for the plain parts of an agent's traffic: text, `functionCall` with object `args`,
 * `functionResponse` with `{"output": text}` or `{"error": text}`. A model content is one assistant message; a
 * user content is a tool message per response (one without an id answers the call at its position in the content
 * before), then one user message of its words. A call without an id is read under a minted one and written back
 * without it. Contents of any other part return null (the package carries no reader for them).
 */

import { type ChatMessage, isDict, type JsonValue, type Part, type TextPart, type ToolCall } from "./messages.js";
import { everyItemKept, inOrder, keptItems, planRewrite } from "./neutral.js";
import type { RepairResult } from "./repair.js";

type Dict = Record<string, unknown>;
type Kept = { [key: string]: JsonValue };

const NAME = "gemini";
export const BRIDGE_TEXT = "(continue)";

/** The id a call without one is read under (the stubs' `~gemini:` ids). */
export function mintedId(index: number, k: number): string {
  return `~gemini:${index}.${k}`;
}

function kept(data: { provider_data?: { [provider: string]: JsonValue } }): Kept | null {
  const value = data.provider_data?.[NAME];
  return isDict(value) ? (value as Kept) : null;
}

// (the keys are walked with for-in, which lists no key array: the reader runs on every part of the list)
function onlyKeys(value: Dict, allowed: readonly string[]): boolean {
  for (const key in value) if (!allowed.includes(key)) return false;
  return true;
}

/** The key of an object with exactly one key, or null. */
function soleKey(value: Dict): string | null {
  let found: string | null = null;
  for (const key in value) {
    if (found !== null) return null;
    found = key;
  }
  return found;
}

const CONTENT_KEYS: readonly string[] = ["role", "parts"];
const CALL_KEYS: readonly string[] = ["id", "name", "args"];
const RESPONSE_KEYS: readonly string[] = ["id", "name", "response"];

/** The one-key part's kind, or null for a part of any other shape. */
function partKind(part: unknown): "text" | "functionCall" | "functionResponse" | null {
  const key = isDict(part) ? soleKey(part) : null;
  return key === "text" || key === "functionCall" || key === "functionResponse" ? key : null;
}

/** A content's texts as neutral content: one text as a string, more as parts (an empty text is kept, marked, to
 * be written back as it was). */
function neutral(texts: readonly string[]): string | Part[] {
  if (texts.length === 0) return "";
  if (texts.length === 1 && texts[0]) return texts[0];
  return texts.map((text) => (text ? { type: "text", text } : { type: "text", text: "", provider_data: { [NAME]: {} } }));
}

function readModel(parts: unknown[], index: number): ChatMessage | null {
  const texts: string[] = [];
  let calls: ToolCall[] | null = null; // (built for a content that has calls)
  for (const raw of parts) {
    const kind = partKind(raw);
    if (kind === null || kind === "functionResponse") return null;
    const value = (raw as Dict)[kind];
    if (kind === "text") {
      if (typeof value !== "string") return null;
      if (value) texts.push(value);
      continue;
    }
    if (!isDict(value) || !onlyKeys(value, CALL_KEYS)) return null;
    const { id, name, args } = value;
    if (typeof name !== "string" || !name || (id != null && typeof id !== "string")) return null;
    if (args != null && !isDict(args)) return null;
    const call: ToolCall = {
      id: (id as string | undefined) || mintedId(index, calls?.length ?? 0),
      name,
      arguments: (args ?? {}) as { [key: string]: JsonValue },
    };
    if (!id) call.provider_data = { [NAME]: { noId: true } };
    if (calls === null) calls = [call];
    else calls.push(call);
  }
  const message: ChatMessage = { role: "assistant", content: neutral(texts) };
  if (calls !== null) message.tool_calls = calls;
  return message;
}

function readUser(parts: unknown[], calls: readonly ToolCall[]): ChatMessage[] | null {
  const out: ChatMessage[] = [];
  const rest: string[] = [];
  for (const raw of parts) {
    const kind = partKind(raw);
    if (kind === null || kind === "functionCall") return null;
    const value = (raw as Dict)[kind];
    if (kind === "text") {
      if (typeof value !== "string") return null;
      rest.push(value);
      continue;
    }
    if (!isDict(value) || !onlyKeys(value, RESPONSE_KEYS)) return null;
    const { id, name, response } = value;
    // `{"output": text}` or `{"error": text}`, nothing beside
    const key = isDict(response) ? soleKey(response) : null;
    const text = key === "output" || key === "error" ? (response as Dict)[key] : undefined;
    if (typeof text !== "string" || typeof name !== "string" || !name || (id != null && typeof id !== "string")) return null;
    const call = calls[out.length];
    const message: ChatMessage = {
      role: "tool",
      tool_call_id: (id as string | undefined) || (call?.id ?? ""),
      tool_name: name,
      content: text,
    };
    if (key === "error") message.is_error = true;
    if (!id && call !== undefined && kept(call)?.noId) message.provider_data = { [NAME]: { noId: true } };
    out.push(message);
  }
  if (rest.length > 0) out.push({ role: "user", content: neutral(rest) });
  return out;
}

const NO_CALLS: readonly ToolCall[] = [];

/** The neutral messages of each content (null when a content is of a shape this reader does not take). */
export function readGroups(items: readonly unknown[]): ChatMessage[][] | null {
  const groups: ChatMessage[][] = [];
  let calls: readonly ToolCall[] = NO_CALLS; // the calls of the content before
  for (let i = 0; i < items.length; i++) {
    const content = items[i];
    if (!isDict(content) || !onlyKeys(content, CONTENT_KEYS) || !Array.isArray(content.parts)) return null;
    const role = content.role; // (a content without one: check's reading of it is not ported)
    if (role === "model") {
      const message = readModel(content.parts, i);
      if (message === null) return null;
      groups.push(message.content || message.tool_calls ? [message] : []);
      calls = message.tool_calls ?? NO_CALLS;
      continue;
    }
    if (role !== "user") return null;
    const read = readUser(content.parts, calls);
    if (read === null) return null;
    calls = NO_CALLS;
    const before = i > 0 ? items[i - 1] : null;
    if (read.length > 0 && isDict(before) && before.role !== "model") {
      // a turn of its own after another user turn (the writer would merge the two)
      const first = read[0] as ChatMessage;
      read[0] = { ...first, provider_data: { [NAME]: { ...(kept(first) ?? {}), turn: true } } };
    }
    groups.push(read);
  }
  return groups;
}

// ---------------------------------------------------------------------------------------------- writing

function bridge(): Dict {
  return { role: "user", parts: [{ text: BRIDGE_TEXT }] };
}

function userParts(content: ChatMessage["content"]): Dict[] {
  if (content === undefined || typeof content === "string") return content ? [{ text: content }] : [];
  const out: Dict[] = [];
  for (const part of content) {
    if (part.type !== "text") continue;
    if (part.provider_data === undefined ? part.text : true) out.push({ text: part.text });
  }
  return out;
}

function modelParts(content: ChatMessage["content"]): Dict[] {
  if (content === undefined || typeof content === "string") return content ? [{ text: content }] : [];
  return content.filter((part) => part.type === "text" && part.text).map((part) => ({ text: (part as TextPart).text }));
}

function opensTurn(message: ChatMessage): boolean {
  return Boolean(kept(message)?.turn);
}

function addCallParts(parts: Dict[], calls: readonly ToolCall[]): void {
  for (const call of calls) {
    const args = call.arguments; // the input's own object: written as it was read
    parts.push({ functionCall: kept(call)?.noId ? { name: call.name, args } : { id: call.id, name: call.name, args } });
  }
}

function addResponses(parts: Dict[], calls: readonly ToolCall[], messages: readonly ChatMessage[], first: number): void {
  calls.forEach((call, k) => {
    const result = messages[first + k] as ChatMessage;
    const content = result.content ?? "";
    const text =
      typeof content === "string"
        ? content
        : content
            .filter((part) => (part.type === "text" || part.type === "thinking") && part.text)
            .map((part) => (part as TextPart).text)
            .join("\n");
    const response: Dict = kept(result)?.noId || kept(call)?.noId ? { name: call.name } : { id: call.id, name: call.name };
    response.response = result.is_error ? { error: text } : { output: text };
    parts.push({ functionResponse: response });
  });
}

/** The contents of `messages` (with `boundary`, a run of `repairBody`: `origins` gets, for each content written,
 * the message that opened it; a user turn open before the boundary is closed there). */
function contentsOf(messages: readonly ChatMessage[], boundary: number | null, origins: number[]): Dict[] {
  const contents: Dict[] = [];
  let openUser: Dict[] | null = null;
  let i = 0;
  while (i < messages.length) {
    const message = messages[i] as ChatMessage;
    i += 1;
    if (message.role !== "assistant") {
      const parts = userParts(message.content);
      if (parts.length === 0) continue;
      if (openUser === null || i - 1 === boundary || opensTurn(message)) {
        openUser = parts;
        contents.push({ role: "user", parts: openUser });
        origins.push(i - 1);
      } else {
        openUser.push(...parts);
      }
      continue;
    }
    openUser = null; // an assistant message always ends the user turn
    if (contents.length === 0) {
      contents.push(bridge()); // GE2: start with a user turn
      origins.push(i - 1);
    }
    const parts = modelParts(message.content);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      if (parts.length > 0) {
        contents.push({ role: "model", parts });
        origins.push(i - 1);
      }
      continue;
    }
    if ((contents[contents.length - 1] as Dict).role !== "user") {
      contents.push(bridge()); // GE2: a call turn follows a user or response turn
      origins.push(i - 1);
    }
    addCallParts(parts, calls);
    contents.push({ role: "model", parts });
    origins.push(i - 1);
    openUser = [];
    addResponses(openUser, calls, messages, i);
    i += calls.length;
    contents.push({ role: "user", parts: openUser });
    origins.push(i - calls.length);
  }
  return contents;
}

/** The contents of `messages.slice(lead)`, a run written anew; the first `lead` messages are written for context
 * and left out. */
export function writeRun(messages: readonly ChatMessage[], lead: number): Dict[] {
  const origins: number[] = [];
  if (lead === 0) {
    const contents = contentsOf(messages, null, origins);
    return contents.length > 0 ? contents : [bridge()]; // GE6: the list must not be left empty
  }
  return contentsOf(messages, lead, origins).filter((_, k) => (origins[k] as number) >= lead);
}

/** `kept` without the items to write again with a call turn's new results (one user turn on the wire, GE1). */
function wholeResponseTurns(out: readonly ChatMessage[], kept: (number | null)[]): (number | null)[] {
  const dropped = new Set<number>();
  out.forEach((message, p) => {
    const n = message.tool_calls?.length ?? 0;
    if (n === 0) return;
    const answers = kept.slice(p + 1, p + 1 + n);
    if (!answers.includes(null)) return;
    const held = answers.filter((r) => r !== null) as number[];
    for (const r of held) dropped.add(r);
    const after = p + 1 + n;
    const next = out[after];
    const r = kept[after];
    if (held.length === 0 && next !== undefined && r !== null && r !== undefined &&
        (next.role === "user" || next.role === "system") && !opensTurn(next)) {
      dropped.add(r); // a turn of its own after the (now empty) results turn
    }
  });
  return dropped.size === 0 ? kept : kept.map((r) => (r !== null && dropped.has(r) ? null : r));
}

/** The new list: kept items as they are, each run written anew (the results of a call turn together). */
function rebuild(items: readonly unknown[], out: readonly ChatMessage[], kept: (number | null)[]): [unknown[], number[]] {
  const whole = wholeResponseTurns(out, kept);
  // a run with no lead is written after the message before it (it tells whether a call turn needs a bridge)
  const runs = planRewrite(out, whole).map((run) =>
    run.lead === run.start && run.start > 0 ? { lead: run.start - 1, start: run.start, end: run.end } : run,
  );
  const newItems: unknown[] = [];
  const rewritten: number[] = [];
  let p = 0;
  let next = 0; // the next run (they come in order)
  while (p < out.length) {
    const run = runs[next];
    if (run === undefined || run.start !== p) {
      const item = items[whole[p] as number];
      if (newItems.length === 0 || newItems[newItems.length - 1] !== item) newItems.push(item);
      p += 1;
      continue;
    }
    next += 1;
    const written = writeRun(out.slice(run.lead, run.end), run.start - run.lead);
    for (const content of written) {
      rewritten.push(newItems.length);
      newItems.push(content);
    }
    p = run.end;
  }
  return [newItems, rewritten];
}

/** The repaired list of a neutral repair of `groups` (the input's own list when every item is kept), and the
 * positions of the items written anew. */
export function rewriteContents(
  items: readonly unknown[],
  groups: readonly ChatMessage[][],
  flatLength: number,
  result: RepairResult,
  sources: readonly number[],
): [readonly unknown[], number[]] {
  const out = result.messages;
  const kept = keptItems(groups, sources);
  if (out.length === flatLength && everyItemKept(kept, groups) && inOrder(kept) && planRewrite(out, kept).length === 0) {
    return [items, []];
  }
  return rebuild(items, out, kept);
}
