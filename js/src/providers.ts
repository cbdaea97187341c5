/**
 * `repairBody` in each provider's own format: the adapter stubs its wire items, the one planner plans, and the plan
 * is assembled from the input's items and the adapter's writer (Python's `Provider.repair_body` stub route). Items
 * repair leaves alone are the input's own objects; only the others are written anew.
 *
 * The stubs of Anthropic, Chat and Responses take each provider's whole vocabulary: what chatmend does not model
 * (thinking and redacted thinking, server and hosted tools' items, reasoning, media, unknown fields) rides along in
 * its message, and only the ids repair pairs by matter; Gemini's take the plain shapes Python's take, every other
 * list going the neutral route, which reads every part. Where Python rewrites an item holding such parts, the hooks
 * write it as Python's writer does (the conformance suite holds the bytes equal); Anthropic's list that still breaks
 * a rule after repair is written whole, as Python's neutral route writes it. Ids the provider would not take are
 * mapped to wire ids as Python's writers map them (`underWireIds`). Gemini's bodies the stubs do not take (or whose
 * list still breaks a rule) go the neutral route, as in Python (`gemini.ts`). Every Responses client call's steps
 * are written as Python's writer writes them (a synthetic output in the call's own output type, a note of any output
 * as its reader reads it, refusals, audio and untyped data URLs too). What is still refused with
 * `UnsupportedBodyError`: shapes none of these readers take (an item that is not an object, a Gemini content
 * Python's reader refuses too, an output part Python's reader refuses), a value whose Python form is not ported
 * (a number Python writes otherwise than JavaScript in a text the package writes).
 */

import { assemble, type Item, type Writer } from "./assembly.js";
import { chatPartProblem, holdsLoneSurrogate, listHoldsProblem, lonePaths } from "./check.js";
import { type ChatMessage, codePoints, isBlank, isDict, pythonNumber } from "./messages.js";
import { sanitizingIdMaker, shorteningIdMaker, wireIds } from "./ids.js";
import {
  ANSWER,
  BLANK,
  CALL,
  CALLS,
  KEEP,
  NOTE,
  OTHER,
  planSpans,
  planUnchanged,
  type Ref,
  REPLY,
  RESULT,
  type SpanPlan,
  type Step,
  type Stubs,
  SYNTHETIC,
} from "./planner.js";
import { readGroups, rewriteContents, writeRun } from "./gemini.js";
import { type IsReadOnly, orphanNoteText, readsOnly, repairTraced, syntheticText } from "./repair.js";

export type ProviderName = "anthropic" | "openai_chat" | "openai_responses" | "gemini";

export interface BodyReport {
  /** The final ids of the calls answered as interrupted, in history order. */
  interrupted: string[];
  moved: number;
  notes: number;
  renamed: number;
  dropped: number;
}

export interface BodyRepair {
  /** The repaired body: every top-level field as it was, the list's unchanged items the input's own objects. */
  body: Record<string, unknown>;
  /** True when repair changed the conversation. */
  changed: boolean;
  /** Positions in the new list of the items written anew. */
  rewritten: number[];
  report: BodyReport;
  /** The paths of the strings (values or keys) whose lone surrogates were replaced by U+FFFD, in document order, as
   * `check` names them (`JSON`); empty when the body held none. */
  mended: string[];
}

/** A repair of the list, before `repairBody` says what it mended. */
type ListRepair = Omit<BodyRepair, "mended">;

export interface RepairBodyOptions {
  isReadOnly?: IsReadOnly;
}

/** A body this package cannot repair exactly as the Python library does (it needs the neutral route). */
export class UnsupportedBodyError extends Error {
  constructor(
    readonly provider: ProviderName,
    readonly reason: string,
  ) {
    super(`${provider}: ${reason}`);
    this.name = "UnsupportedBodyError";
  }
}

interface Adapter extends Writer {
  readonly name: ProviderName;
  readonly listKey: string;
  readonly idMaxLength: number | null;
  readonly idAlphabet: RegExp | null;
  readonly namesResults: boolean;
  stubs(items: Item[]): Stubs | null;
  /** False for a body whose rules depend on more than the stubs say (the neutral route's). */
  takesStubs(body: Record<string, unknown>): boolean;
  /** True when Python's twin repairs this list through its neutral route (items its stubs do not take, a step its
   * hooks do not write), whose runs rewrite a kept result between two new results of one call too. */
  neutralInPython(items: Item[], plan: SpanPlan, body: Record<string, unknown>): boolean;
  /** The list as the writer writes it whole, when the neutral route finds the repaired list breaks a rule of the
   * wire beyond pairing (Anthropic's: consecutive turns of one role merged); absent where the package does not
   * port it. */
  wholeList?(items: Item[], input: readonly Item[]): Item[];
  /** The assembled list with the turns Python's neutral route does not keep written anew (Responses' `_keeps`: a
   * turn ending with reasoning), and the positions written anew (asked only of a list whose stubs say `unsentAlone`). */
  unkeptTurns?(items: Item[], rewritten: number[]): [Item[], number[]];
  /** The assembled list with what the writer changes in the messages written anew (Chat's: images and files moved
   * out, OC7; a function message named after its call), and the positions written anew; null where Python's neutral
   * route writes the whole list all the same (`wholeList`). */
  movedOut?(items: Item[], rewritten: number[], input: readonly Item[]): [Item[], number[]] | null;
  /** True when the repair shows the input is refused, so it need not be judged valid as it is. */
  refused(report: BodyReport): boolean;
}

type Dict = Record<string, unknown>;

// (keys counted and walked with for-in, which lists no key array: these run on every part of a list)
function size(value: Dict): number {
  let count = 0;
  for (const _key in value) count += 1;
  return count;
}

const refusedWhenAnsweredOrNoted = (report: BodyReport): boolean =>
  report.interrupted.length > 0 || report.notes > 0;

// ------------------------------------------------------------------------------------------- OpenAI Chat

/** A function call with a name and string arguments (fields beside them, such as a stream's `index`, ride along). */
function plainChatCall(call: unknown): boolean {
  if (!isDict(call) || call.type !== "function") return false;
  const fn = call.function;
  if (typeof call.id !== "string" || !isDict(fn)) return false;
  return typeof fn.name === "string" && fn.name.length > 0 && typeof fn.arguments === "string";
}

function textParts(content: unknown): boolean {
  return (
    Array.isArray(content) &&
    content.length > 0 &&
    content.every((p) => isDict(p) && p.type === "text" && typeof p.text === "string")
  );
}

/** The text of a text part, or of a refusal part (the reader reads it as text); undefined for any other part. */
function chatPartText(part: Dict): string | undefined {
  if (part.type === "text" && typeof part.text === "string") return part.text;
  if (part.type === "refusal" && typeof part.refusal === "string") return part.refusal;
  return undefined;
}

/** The texts of a content's text and refusal parts, joined by newlines (as the writer joins them). */
function joinedTexts(content: Dict[]): string {
  const texts: string[] = [];
  for (const part of content) {
    const text = chatPartText(part);
    if (text !== undefined) texts.push(text);
  }
  return texts.join("\n");
}

/** A tool message's output as the note of an orphan says it: its text, or its text and refusal parts' texts (none
 * for no content). */
function chatOutput(content: unknown): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  return joinedTexts(content as Dict[]);
}

/** True for a part the reader reads: any but a text or refusal part without its text, an image without a URL, a part
 * without a type (which it refuses); an image URL given as a bare string too (Mistral's spelling: `check` says SHAPE). */
function readablePart(part: unknown): boolean {
  return chatPartProblem(part) === null || (isDict(part) && chatImage(part));
}

/** True for a content the reader reads: none, a string, or parts it reads (`readablePart`). */
function readableContent(content: unknown): boolean {
  if (content === undefined || content === null || typeof content === "string") return true;
  return Array.isArray(content) && content.every(readablePart);
}

/** An `image_url` part with a URL (a data URL naming no media type too: the reader keeps it as its URL), or with its
 * URL as a bare string (Mistral's spelling, which the reader takes and `check` reports: SHAPE). */
function chatImage(part: Dict): boolean {
  if (part.type !== "image_url") return false;
  const url = isDict(part.image_url) ? part.image_url.url : part.image_url;
  return typeof url === "string" && url !== "";
}

/** An `input_audio` or `file` part the reader reads as a file (`_read_file`), which the writer moves as it moves
 * images; any other such part it keeps as it is, where it stands, as a part of a type it does not name. */
function chatFile(part: Dict): boolean {
  if (part.type === "input_audio") {
    const audio = part.input_audio;
    return isDict(audio) && typeof audio.data === "string" && typeof audio.format === "string" && audio.format !== "";
  }
  if (part.type !== "file" || !isDict(part.file)) return false;
  const { file_data: data, file_id: id, filename } = part.file;
  const given = (value: unknown) => value !== undefined && value !== null;
  // (Python's `data or file_id`: a value other than a string is refused either way)
  return given(data) !== given(id) && typeof (data || id) === "string" && (!given(filename) || typeof filename === "string");
}

/** The parts the writer moves out of a message other than the user's to a user message of their own (images, OC7,
 * and files: the API takes them in user messages only), none for a user's. */
function movedParts(item: Item): Item[] {
  if (item.role === "user" || !Array.isArray(item.content)) return [];
  return item.content.filter((part: Item) => chatImage(part) || chatFile(part));
}

/** True for a message other than the user's holding images (which `check` reports: OC7). */
function holdsImages(item: Item): boolean {
  return item.role !== "user" && Array.isArray(item.content) && item.content.some((part: Item) => isDict(part) && chatImage(part));
}

/** The text the writer puts in a result whose images it moves when it has none (`wire.NO_TEXT_FOR_IMAGES`). */
const NO_TEXT_FOR_IMAGES = "(image result: see the next message)";

/** A message whose images and files the writer moves, as it writes it: a result's text and refusal parts joined (or
 * where its images went when it has none; a function message named after its call, `callName`), an assistant's or a
 * system message's other parts (its content spelled as a list). */
function withoutMoved(item: Item, callName: string): Item {
  if (item.role !== "tool" && item.role !== "function") {
    return { ...item, content: (item.content as Item[]).filter((part: Item) => !chatImage(part) && !chatFile(part)) };
  }
  const text = joinedTexts(item.content) || NO_TEXT_FOR_IMAGES;
  // a part of a type the reader does not name follows the text, as it was
  const kept = (item.content as Item[]).filter((part: Item) => chatPartText(part) === undefined && !chatImage(part) && !chatFile(part));
  const content = kept.length > 0 ? [{ type: "text", text }, ...kept] : text;
  return item.role === "function" ? { ...item, name: callName, content } : { ...item, content };
}

/** Where the writer says moved parts come from (a function message's: its call's name, as it has no id). */
function movedLabel(item: Item, callName: string): Item {
  const source = item.role === "tool" ? `tool result ${item.tool_call_id}` : item.role === "function" ? `tool result ${callName}` :
    item.role === "assistant" ? "the assistant" : "the system message";
  return { type: "text", text: `Images from ${source}:` };
}

/** True for an assistant message with calls (a legacy `function_call` too). */
function makesCalls(item: Item): boolean {
  return (Array.isArray(item.tool_calls) && item.tool_calls.length > 0) || (item.function_call ?? null) !== null;
}

/** `items` as Python's writer writes the messages written anew (`rewritten`) in a run (`_write_messages`): a function
 * message named after the legacy call it answers, and the images and files of each moved: a result's, and an
 * assistant's with calls, to a user message after the results that follow; a system message's, and an assistant's
 * without calls, to one right after it. Unchanged when a message kept as the input's own holds images: then the list
 * still breaks OC7 and is written whole (`chatWholeList`). The parts a kept message would move stay in it, as the
 * input holds them: a run's writer leaves them out of its context. */
function chatWritten(items: Item[], rewritten: number[], input: readonly Item[]): [Item[], number[]] {
  const written = new Set(rewritten);
  const own = new Set(input);
  // (then the list still breaks OC7 and is written whole)
  if (items.some((item) => own.has(item) && holdsImages(item))) return [items, rewritten];
  const out: Item[] = [];
  const at: number[] = [];
  let waiting: Item[] = [];
  let callName = ""; // the name of the last assistant message's legacy call, which a function message answers
  const flush = () => {
    if (waiting.length === 0) return;
    at.push(out.length);
    out.push({ role: "user", content: waiting });
    waiting = [];
  };
  items.forEach((item, k) => {
    const result = item.role === "tool" || item.role === "function"; // (a function message is a result too)
    if (!result) flush();
    if (item.role === "assistant") callName = isDict(item.function_call) ? (item.function_call.name as string) : "";
    if (!written.has(k)) {
      out.push(item);
      return;
    }
    at.push(out.length);
    const parts = movedParts(item);
    if (parts.length === 0) {
      out.push(item.role === "function" && item.name !== callName ? { ...item, name: callName } : item);
      return;
    }
    out.push(withoutMoved(item, callName));
    waiting.push(movedLabel(item, callName), ...parts);
    if (!result && !makesCalls(item)) flush();
  });
  flush();
  return [out, at];
}

/** The list as Python's Chat writer writes it whole (`chatWritten` of every message). */
function chatWholeList(items: Item[]): Item[] {
  return chatWritten(items, items.map((_, k) => k), [])[0];
}

/** A legacy `function_call` as the reader takes it: a non-empty name and string arguments. */
function legacyChatCall(call: unknown): boolean {
  return isDict(call) && typeof call.name === "string" && call.name !== "" && typeof call.arguments === "string";
}

/** True for an assistant message whose `refusal` field says something (the reader reads it as text). */
function saysRefusal(item: Item): boolean {
  return typeof item.refusal === "string" && item.refusal !== "" && !isBlank(item.refusal);
}

/** True for an assistant message's content that says nothing (rule 1): none, or blank text in a string or in
 * text parts only. */
function saysNothing(content: unknown): boolean {
  if (content === undefined || content === null) return true;
  if (typeof content === "string") return isBlank(content);
  return Array.isArray(content) && content.every((part) => {
    const text = isDict(part) ? chatPartText(part) : undefined;
    return text !== undefined && isBlank(text);
  });
}

/** True for a message of the plain shapes Python's Chat stubs take (`spans.stubs`): the same keys, the same types. */
function plainChatItem(item: Item): boolean {
  const { role, content } = item;
  if (content === "") return false;
  const n = size(item);
  if (role === "tool") return n === 3 && typeof content === "string" && typeof item.tool_call_id === "string";
  if (role === "assistant") {
    if (!("content" in item) || (content !== null && typeof content !== "string")) return false;
    const calls = item.tool_calls;
    if (calls === undefined || calls === null) return n === 2;
    return n === 3 && calls.every((call: unknown) => isDict(call) && size(call) === 3 && isDict(call.function) && size(call.function) === 2);
  }
  if (role === "user" || role === "system") {
    return n === 2 && (typeof content === "string" || (role === "user" && textParts(content) && content.every((part: Dict) => size(part) === 2)));
  }
  return false;
}

const openaiChat: Adapter = {
  name: "openai_chat",
  listKey: "messages",
  idMaxLength: 40,
  idAlphabet: null,
  namesResults: false,
  blocksKey: null,
  joinsTurns: false,
  refused: refusedWhenAnsweredOrNoted,
  // (Python's stubs take only the plain shapes, `spans.stubs`: with any other, its neutral route repairs the list)
  neutralInPython: (items) => !items.every(plainChatItem),
  takesStubs: () => true,
  movedOut: chatWritten,
  wholeList: chatWholeList,
  // Fields chatmend does not model (a name, reasoning content, a refusal, media parts) ride along in their message:
  // only the ids repair pairs by matter here.
  stubs(items) {
    const kinds: number[] = [];
    const refs: Ref[] = [];
    let movesOut = false; // images or files in a message other than the user's, or a function message named otherwise
    let legacy = ""; // the id of the last assistant message's legacy call, which a function message answers
    let legacyName = ""; // and its name
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (!isDict(item)) return null;
      const { role, content } = item;
      if (role !== "user" && Array.isArray(content) && !movesOut) movesOut = content.some((part) => isDict(part) && (chatImage(part) || chatFile(part)));
      if (role === "tool") {
        if (typeof item.tool_call_id !== "string") return null;
        if ("name" in item && typeof item.name !== "string") return null;
        if (!readableContent(content)) return null;
        kinds.push(RESULT);
        refs.push(item.tool_call_id);
      } else if (role === "function") {
        // a legacy function message: the result of the legacy call before it, whatever its name (Python's reader)
        if (typeof item.name !== "string" || item.name === "" || !readableContent(content)) return null;
        // (the writer names what it writes anew after the call: `chatWritten`)
        if (legacy !== "" && item.name !== legacyName) movesOut = true;
        kinds.push(RESULT);
        refs.push(legacy);
      } else if (role === "assistant") {
        if (!readableContent(content)) return null;
        const calls = item.tool_calls ?? [];
        const legacyCall = item.function_call ?? null;
        if (!Array.isArray(calls) || !calls.every(plainChatCall)) return null;
        if (legacyCall !== null && !legacyChatCall(legacyCall)) return null;
        // a legacy `function_call` has no id: the reader gives it `call_<message>_<call>`, after the others
        legacy = legacyCall === null ? "" : `call_${i}_${calls.length}`;
        legacyName = legacyCall === null ? "" : (legacyCall as Dict).name as string;
        if (calls.length === 0 && legacyCall === null) {
          kinds.push(saysNothing(content) && !saysRefusal(item) ? BLANK : REPLY);
          refs.push(null);
          continue;
        }
        kinds.push(CALLS);
        const ids = calls.map((call) => call.id as string);
        if (legacyCall !== null) ids.push(legacy);
        refs.push(ids);
      } else if (role === "user" || role === "system" || role === "developer") {
        if (!readableContent(content)) return null;
        kinds.push(OTHER);
        refs.push(null);
      } else {
        return null;
      }
    }
    return { kinds, refs, movesOut };
  },
  renamedCalls(items, finalIds) {
    const item = items[0];
    if (!Array.isArray(item.tool_calls) || item.tool_calls.length === 0) return [{ ...item }]; // (a legacy call has no id)
    return [{ ...item, tool_calls: item.tool_calls.map((call: Dict, k: number) => ({ ...call, id: finalIds[k] })) }];
  },
  renamedResult(piece, finalId) {
    // (a function message has no id: the stubs take one only under its call's name, which the writer gives it)
    return [piece.role === "function" ? { ...piece } : { ...piece, tool_call_id: finalId }];
  },
  syntheticResult(calls, k, finalId, isReadOnly) {
    const functions: Dict[] = calls[0].tool_calls ?? [];
    const legacyCall = k === functions.length; // the legacy call, after the others
    const name: string = legacyCall ? calls[0].function_call.name : ((functions[k] as Dict).function as Dict).name as string;
    const text = `Error: ${syntheticText(name, readsOnly(isReadOnly, name))}`; // no error flag in Chat
    if (legacyCall) return [{ role: "function", name, content: text }]; // a legacy call's result
    return [{ role: "tool", tool_call_id: finalId, content: text }];
  },
  note(piece, _caller, ref) {
    const name = typeof piece.name === "string" ? piece.name : null;
    // the result's parts other than text (images, files, a type the reader does not name) follow its note, as the
    // writer writes a user message's parts
    const more = Array.isArray(piece.content) ? piece.content.filter((part: Dict) => chatPartText(part) === undefined) : [];
    // (a function message answers the legacy call before it, under the id the reader gives that call)
    const text = orphanNoteText(name, ref as string, false, chatOutput(piece.content), more.length > 0);
    return [{ role: "user", content: [{ type: "text", text }, ...more] }];
  },
};

// ------------------------------------------------------------------------------------- Anthropic Messages

/** A user block other than a result: text that says something, or any block of another type (an image, a
 * document: it rides along as it is). */
function plainUserBlock(kind: unknown, block: Dict): boolean {
  if (kind === "text") return typeof block.text === "string";
  return typeof kind === "string" && kind !== "tool_result" && kind !== "tool_use";
}

/** The blocks of a turn as Anthropic's writer writes them anew: no blank text, in the turn or in a result's content,
 * and a result left with none (or of blank text) without its content (AN9); the very list when none changes. */
function anthropicTurnBlocks(blocks: Item[]): Item[] {
  let out: Item[] | null = null;
  for (let k = 0; k < blocks.length; k++) {
    const block = blocks[k];
    const written = blankText(block) ? null : isDict(block) && block.type === "tool_result" ? writtenResult(block) : block;
    if (out === null && written !== block) out = blocks.slice(0, k);
    if (out !== null && written !== null) out.push(written);
  }
  return out ?? blocks;
}

function blankText(block: Item): boolean {
  return isDict(block) && block.type === "text" && typeof block.text === "string" && isBlank(block.text);
}

/** A tool_result as the writer writes it: no blank text in its content, and no content when none is left or it is
 * null (an empty string stays as it was spelled). */
function writtenResult(block: Dict): Dict {
  const content = block.content;
  const kept: unknown = Array.isArray(content) ? anthropicTurnBlocks(content) : content;
  const blank = typeof content === "string" ? content !== "" && isBlank(content) :
    content === null || (Array.isArray(content) && content.length > 0 && (kept as Item[]).length === 0);
  if (blank) {
    const { content: _, ...rest } = block;
    return rest;
  }
  return kept === content ? block : { ...block, content: kept };
}

/** The call id of a tool_result (its content text, blocks, empty or none); null for one of another shape, and for a
 * content of whitespace only (not ported: Python's writer leaves it out of a turn it writes anew). */
function anthropicResultId(block: Dict): string | null {
  const callId = block.tool_use_id;
  const content = block.content;
  if (typeof callId !== "string") return null;
  const readable = content === undefined || content === null || typeof content === "string" ||
    (Array.isArray(content) && content.every((part) => isDict(part) && typeof part.type === "string"));
  return readable ? callId : null;
}

const NOT_PLAIN: [number, null] = [-1, null];

/** An assistant turn's kind and call ids (-1: not plain). Blocks chatmend does not model (thinking, redacted
 * thinking, a server tool's call and result) ride along in the turn; they must stand before its calls. */
function anthropicAssistantStub(content: unknown): [number, string[] | null] {
  if (typeof content === "string") return [isBlank(content) ? BLANK : REPLY, null];
  if (!Array.isArray(content)) return NOT_PLAIN;
  const ids: string[] = [];
  let said = false;
  for (const block of content) {
    if (!isDict(block) || typeof block.type !== "string") return NOT_PLAIN;
    if (block.type === "tool_use") {
      const { id, name, input } = block;
      if (typeof id !== "string" || typeof name !== "string" || !name || !isDict(input)) return NOT_PLAIN;
      ids.push(id);
    } else if (ids.length > 0) {
      return NOT_PLAIN; // (a block after a call: the writer puts the calls last)
    } else if (block.type === "text") {
      if (typeof block.text !== "string") return NOT_PLAIN;
      if (!isBlank(block.text)) said = true;
    } else if (block.type === "tool_result") {
      return NOT_PLAIN;
    }
  }
  if (ids.length > 0) return [CALLS, ids];
  return [said ? REPLY : BLANK, null];
}

/** True for a turn of the plain shapes Python's stubs take (`anthropic.spans.stubs`: the same keys, the same types,
 * no blank text the writer would leave out, results of text that says something). */
function strictlyPlainTurn(item: Item): boolean {
  if (size(item) !== 2) return false;
  const { role, content } = item;
  if (role === "assistant") return plainAssistantTurn(content);
  if (role !== "user") return false;
  if (typeof content === "string") return !isBlank(content);
  if (!Array.isArray(content) || content.length === 0) return false;
  return content.every((block) => {
    if (!isDict(block)) return false;
    if (block.type !== "tool_result") return plainUserBlockShape(block.type, block);
    const output = block.content;
    if (size(block) === 3 && typeof output === "string" && !isBlank(output)) return typeof block.tool_use_id === "string";
    return plainResultShape(block);
  });
}

/** `spans._assistant_stub`'s test: text blocks (none blank beside calls or beside words) before tool uses. */
function plainAssistantTurn(content: unknown): boolean {
  if (typeof content === "string") return true;
  if (!Array.isArray(content)) return false;
  let calls = false;
  let blank = false;
  let said = false;
  for (const block of content) {
    if (!isDict(block)) return false;
    const n = size(block) - ("cache_control" in block ? 1 : 0);
    if (block.type === "tool_use") {
      if (n !== 4 || typeof block.id !== "string" || typeof block.name !== "string" || !block.name || !isDict(block.input)) return false;
      calls = true;
    } else if (block.type === "text") {
      if (n !== 2 || typeof block.text !== "string" || calls) return false;
      if (isBlank(block.text)) blank = true;
      else said = true;
    } else {
      return false;
    }
  }
  return !(blank && (calls || said));
}

/** `spans._result_id`'s test: a tool_result of text that says something (or text blocks that do), maybe an error
 * flag and a cache breakpoint. */
function plainResultShape(block: Dict): boolean {
  const n = size(block) - ("cache_control" in block ? 1 : 0) - ("is_error" in block ? 1 : 0);
  if (typeof block.tool_use_id !== "string" || n !== 3 || ("is_error" in block && typeof block.is_error !== "boolean")) return false;
  const content = block.content;
  if (typeof content === "string") return !isBlank(content);
  return Array.isArray(content) && content.length > 0 &&
    content.every((part) => isDict(part) && part.type === "text" && plainUserBlockShape("text", part));
}

/** `spans._plain_user_block`: a text block with text that says something, or an image, maybe with a cache breakpoint. */
function plainUserBlockShape(kind: unknown, block: Dict): boolean {
  if (size(block) - ("cache_control" in block ? 1 : 0) !== 2) return false;
  if (kind === "text") return typeof block.text === "string" && !isBlank(block.text);
  return kind === "image" && isDict(block.source);
}

/** The list as Anthropic's writer writes it whole: no blank text, and no turn left with none (AN9); a user turn of
 * blocks joined to the user turn of blocks before it (`emit_user`); every other turn as it was. */
function mergedTurns(items: Item[]): Item[] {
  const out: Item[] = [];
  for (const turn of items) {
    const content = typeof turn.content === "string" ? turn.content : anthropicTurnBlocks(turn.content);
    if (typeof content === "string" ? isBlank(content) : content.length === 0) continue;
    const last = out[out.length - 1];
    if (turn.role === "user" && typeof content !== "string" && last?.role === "user" && typeof last.content !== "string") {
      out[out.length - 1] = { role: "user", content: [...last.content, ...content] };
    } else {
      out.push(content === turn.content ? turn : { ...turn, content });
    }
  }
  return out;
}

function anthropicNeutralInPython(items: readonly Item[], body: Dict): boolean {
  return thinkingEnabled(body) || !items.every(strictlyPlainTurn);
}

function thinkingEnabled(body: Dict): boolean {
  const thinking = body.thinking;
  return isDict(thinking) && (thinking.type === "enabled" || thinking.type === "adaptive");
}

function toolUses(item: Item): Dict[] {
  return (item.content as Dict[]).filter((block) => block.type === "tool_use");
}

const anthropic: Adapter = {
  name: "anthropic",
  listKey: "messages",
  idMaxLength: 64,
  idAlphabet: /^[a-zA-Z0-9_-]+$/,
  namesResults: true,
  blocksKey: "content",
  joinsTurns: false,
  refused: refusedWhenAnsweredOrNoted,
  // Python's stubs take only the plain turns (and no body with thinking on, whose AT1 judges the last turn): for any
  // other body its neutral route writes the list whole when the repaired list still breaks a rule (AT6, say)
  neutralInPython: (items, _plan, body) => anthropicNeutralInPython(items, body),
  takesStubs: () => true,
  wholeList: mergedTurns,
  stubs(items) {
    const kinds: number[] = [];
    const refs: Ref[] = [];
    const starts: number[] = [];
    const offsets: number[] = [];
    for (const item of items) {
      if (!isDict(item) || !("content" in item)) return null;
      starts.push(kinds.length);
      const { role, content } = item;
      if (role === "assistant") {
        const [kind, ids] = anthropicAssistantStub(content);
        if (kind < 0) return null;
        kinds.push(kind);
        refs.push(ids);
        offsets.push(0);
        continue;
      }
      if (role !== "user") return null;
      if (typeof content === "string") {
        kinds.push(OTHER);
        refs.push(null);
        offsets.push(0);
        continue;
      }
      if (!Array.isArray(content) || content.length === 0) return null;
      let others = false;
      for (let at = 0; at < content.length; at++) {
        const block = content[at];
        if (!isDict(block)) return null;
        if (block.type === "tool_result") {
          const callId = anthropicResultId(block);
          if (callId === null) return null;
          kinds.push(RESULT);
          refs.push(callId);
          offsets.push(at);
          others = false;
          continue;
        }
        if (!plainUserBlock(block.type, block)) return null;
        if (!others) {
          kinds.push(OTHER);
          refs.push(null);
          offsets.push(at);
          others = true;
        }
      }
    }
    starts.push(kinds.length);
    return { kinds, refs, starts, offsets };
  },
  renamedCalls(items, finalIds) {
    const item = items[0];
    let k = 0;
    const content = anthropicTurnBlocks(item.content);
    return [{ ...item, content: content.map((block: Dict) => (block.type === "tool_use" ? { ...block, id: finalIds[k++] } : block)) }];
  },
  renamedResult(piece, finalId) {
    return anthropicTurnBlocks([{ ...piece, tool_use_id: finalId }]);
  },
  turnBlocks: anthropicTurnBlocks,
  syntheticResult(calls, k, finalId, isReadOnly) {
    const name = toolUses(calls[0])[k]?.name as string;
    const text = syntheticText(name, readsOnly(isReadOnly, name));
    return [{ type: "tool_result", tool_use_id: finalId, content: text, is_error: true }];
  },
  note(piece, caller) {
    const callId = piece.tool_use_id as string;
    const names = caller === null ? [] : toolUses(caller[0]).filter((b) => b.id === callId).map((b) => b.name);
    const name = names.length > 0 ? (names[names.length - 1] as string) : null;
    const content = piece.content ?? "";
    const texts = typeof content === "string" ? [] : (content as Dict[]).filter((part) => part.type === "text");
    const output = typeof content === "string" ? content : texts.map((part) => part.text).join("\n");
    // the result's images and documents follow its note, as the writer writes a user message's parts
    const more = typeof content === "string" ? [] : (content as Dict[]).filter((part) => part.type !== "text");
    const note = { type: "text", text: orphanNoteText(name, callId, piece.is_error === true, output, more.length > 0) };
    return [note, ...more];
  },
};

// ------------------------------------------------------------------------------------- OpenAI Responses

const INPUT_ROLES: readonly unknown[] = ["user", "system", "developer"];

/** The client-side calls (the caller runs them and answers by `call_id`), each with the type of its output. */
export const CALL_OUTPUTS: Readonly<Record<string, string>> = {
  function_call: "function_call_output",
  custom_tool_call: "custom_tool_call_output",
  local_shell_call: "local_shell_call_output",
  shell_call: "shell_call_output",
  apply_patch_call: "apply_patch_call_output",
  computer_call: "computer_call_output",
  tool_search_call: "tool_search_output",
};
export const OUTPUT_CALLS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(CALL_OUTPUTS).map(([call, output]) => [output, call]),
);
/** Item types the caller writes (read as a user message holding the item). */
export const INPUT_SIDE: readonly unknown[] = [
  "item_reference",
  "mcp_approval_response",
  "compaction_trigger",
  "additional_tools",
  "configuration_update",
];

/** True for a call the caller answers by `call_id` (a tool search only when the client runs it). */
export function isClientCall(item: Dict): boolean {
  const kind = item.type;
  if (typeof kind !== "string" || !Object.hasOwn(CALL_OUTPUTS, kind) || typeof item.call_id !== "string") return false;
  return kind !== "tool_search_call" || item.execution === "client";
}

/** True for the output of a client-side call. */
export function isClientOutput(item: Dict): boolean {
  const kind = item.type;
  if (typeof kind !== "string" || !Object.hasOwn(OUTPUT_CALLS, kind)) return false;
  return kind !== "tool_search_output" || item.execution === "client";
}

/** The call id an output answers (a local shell output names it `id`). */
export function answeredId(item: Dict): unknown {
  return item.call_id === undefined && item.type === "local_shell_call_output" ? item.id : item.call_id;
}

const PHASES: readonly unknown[] = ["commentary", "final_answer"];

/** The item id an item carries as its own (an output's `id` may be its call's; a reference names another's). */
function itemIds(item: Item): string[] {
  const kind = item.type;
  const own = typeof item.id === "string" && kind !== "item_reference";
  return own && !(typeof kind === "string" && kind.endsWith("_output")) ? [item.id] : [];
}

/** True for an item Python's Responses stubs take: a call, an output of text, or words, with no other field. */
function strictlyPlainItem(item: Item): boolean {
  if (item.type === "function_call") {
    return size(item) === 4 && typeof item.call_id === "string" && typeof item.name === "string" && item.name !== "" &&
      typeof item.arguments === "string";
  }
  if (item.type === "function_call_output") {
    return size(item) === 3 && typeof item.call_id === "string" && typeof item.output === "string";
  }
  return item.type === undefined && size(item) === 2 && typeof item.content === "string" && item.content !== "" &&
    INPUT_ROLES.includes(item.role);
}

/** The tool a call named: `name`, or for a built-in tool's call without one, the tool it calls (`wire.TOOL_NAMES`). */
const RESPONSES_TOOL_NAMES: Record<string, string> = {
  local_shell_call: "local_shell",
  shell_call: "shell",
  apply_patch_call: "apply_patch",
  computer_call: "computer",
  tool_search_call: "tool_search",
};

/** The tool a client call names: its `name`, or for a built-in tool's call without one, the tool it calls. */
function clientToolName(call: Dict): string {
  return typeof call.name === "string" && call.name ? call.name : (RESPONSES_TOOL_NAMES[call.type as string] ?? String(call.type));
}

/** The name of the tool `callId` called in `caller` (the items of the last assistant message calling it), as
 * Python's reader names a result after its call; null when no call of it came before. */
function responsesToolName(caller: Item[] | null, callId: unknown): string | null {
  const calls = (caller ?? []).filter((item: Item) => isClientCall(item) && item.call_id === callId);
  const call = calls.at(-1);
  return call === undefined ? null : clientToolName(call);
}

/** The output texts of a turn's assistant messages. */
function outputTexts(items: Item[]): unknown[] {
  return items.filter(isAssistantMessage).flatMap((item) => {
    if (typeof item.content === "string") return [item.content];
    return (item.content as Dict[]).flatMap((part) => {
      if (part.type === "output_text") return [part.text];
      return part.type === "refusal" && typeof part.refusal === "string" ? [part.refusal] : [];
    });
  });
}

function isAssistantMessage(item: Item): boolean {
  return (item.type ?? "message") === "message" && item.role === "assistant";
}

/** A turn's words in the writer's plain shape: one assistant message without item ids (OR6, OR8). */
function plainAssistantMessage(items: Item[], texts: unknown[]): Dict {
  const phase = items.find((item) => isAssistantMessage(item) && PHASES.includes(item.phase))?.phase;
  const message: Dict = { role: "assistant", content: texts.join("\n") };
  if (phase !== undefined) message.phase = phase;
  return message;
}

/** A turn in the writer's plain shape (`plain_assistant`): its text as one message (none for no text), the hosted
 * items as they are, the calls without item ids under `callIds` (another client call keeps its own item id: the
 * writer's `call_item` writes it from the call it read); reasoning, which travels only with its items' ids (OR8), left
 * out. */
function plainTurn(items: Item[], callIds: readonly (string | null)[]): Item[] {
  const texts = outputTexts(items);
  const text = texts.join("\n");
  const hosted = items.filter((item) => !isAssistantMessage(item) && item.type !== "reasoning" && !isClientCall(item));
  const calls: Dict[] = [];
  let k = 0;
  for (const item of items.filter(isClientCall)) {
    const callId = callIds[k++] as string;
    calls.push(
      item.type === "function_call"
        ? { type: "function_call", call_id: callId, name: item.name, arguments: functionArguments(item.arguments) }
        : clientCallItem(item, callId),
    );
  }
  return [...(text ? [plainAssistantMessage(items, texts)] : []), ...hosted, ...calls];
}

/** A function call's `arguments` as the writer writes them (`arguments_json`): its text as it is, an object as compact
 * JSON, none as no text. */
function functionArguments(args: unknown): string {
  if (typeof args === "string") return args;
  return args === undefined || args === null ? "" : compactJson(args);
}

/** The first item of the assistant turn each item stands in, as Python's reader joins items into turns (-1 for an
 * item of no turn): replayed items, with item ids, and plain ones are never one turn, and a plain message after
 * calls or after another message opens a turn of its own. */
function readerTurns(items: readonly Item[]): number[] {
  const starts: number[] = [];
  let start = -1;
  let allIds = true;
  let named = false; // the turn holds a message, reasoning or a call
  let calls = 0;
  let messages = 0;
  items.forEach((item, k) => {
    const message = isAssistantMessage(item);
    const call = isClientCall(item);
    const outside = !message && !call && (isClientOutput(item) || INPUT_SIDE.includes(item.type) ||
      ((item.type ?? "message") === "message"));
    if (outside) {
      start = -1;
      starts.push(-1);
      return;
    }
    const hasId = typeof item.id === "string";
    const isNamed = message || call || item.type === "reasoning";
    const joins = start >= 0 && (!isNamed || ((!named || hasId === allIds) && (!message || hasId || (calls === 0 && messages === 0))));
    if (!joins) {
      start = k;
      allIds = true;
      named = false;
      calls = 0;
      messages = 0;
    }
    if (isNamed) {
      named = true;
      allIds &&= hasId;
    }
    if (call) calls += 1;
    if (message) messages += 1;
    starts.push(start);
  });
  return starts;
}

/** True when one of `ids` is sent by the items `before` a turn. A turn that ends with reasoning is written in the
 * plain shape (OR7: a changed list leaves that reasoning out, `unkeptTurns`), which sends the item ids of its hosted
 * items and client calls other than functions only. */
function sentBefore(before: readonly Item[], ids: string[]): boolean {
  const turns = readerTurns(before);
  const endsWithReasoning = new Set<number>(); // the turns that do
  before.forEach((item, j) => {
    const turn = turns[j] as number;
    if (turn >= 0 && turns[j + 1] !== turn && item.type === "reasoning") endsWithReasoning.add(turn);
  });
  return before.some((item, j) => {
    const plain = endsWithReasoning.has(turns[j] as number) &&
      (item.type === "reasoning" || item.type === "function_call" || isAssistantMessage(item));
    return !plain && itemIds(item).some((id) => ids.includes(id));
  });
}

/** The list as Python's writer writes it whole: the items the assembly has, but an assistant turn (as the reader
 * joins items) that ends with reasoning or whose item ids were already sent written in the plain shape (OR7: the
 * writer does not replay it; OR6: an item id is sent once), and an output of another type than its call's in its
 * call's type. */
function responsesWholeList(items: Item[]): Item[] {
  const sent = new Set<string>();
  const kinds = new Map<unknown, string>(); // each call id's call type
  const turns = readerTurns(items);
  const out: Item[] = [];
  let k = 0;
  while (k < items.length) {
    const item = items[k];
    if (turns[k] === k) {
      let end = k + 1;
      while (end < items.length && turns[end] === k) end += 1;
      const turn = items.slice(k, end);
      const ids = turn.flatMap(itemIds);
      for (const entry of turn) if (isClientCall(entry)) kinds.set(entry.call_id, entry.type);
      const asItIs = turn[turn.length - 1].type !== "reasoning" && !ids.some((id) => sent.has(id));
      const written = asItIs ? turn : plainTurn(turn, turn.filter(isClientCall).map((c) => c.call_id));
      for (const entry of written) for (const id of itemIds(entry)) sent.add(id);
      out.push(...written);
      k = end;
      continue;
    }
    const kind = isClientOutput(item) ? kinds.get(answeredId(item)) : undefined;
    out.push(kind !== undefined && CALL_OUTPUTS[kind] !== item.type ? inCallType(item, kind) : item);
    for (const id of itemIds(item)) sent.add(id);
    k += 1;
  }
  return out;
}

/** `items` with each turn that ends with a reasoning item written anew in the plain shape, and the outputs of its
 * calls after it written anew too (Python's `_keeps`, OR7: a reasoning item whose item is gone is left out, and its
 * turn's run holds the calls' results); `rewritten` moved with the items. */
function responsesUnkeptTurns(items: Item[], rewritten: number[]): [Item[], number[]] {
  const turns = readerTurns(items);
  const written = new Set(rewritten);
  const out: Item[] = [];
  const at: number[] = [];
  let k = 0;
  while (k < items.length) {
    let end = k + 1;
    if (turns[k] === k) while (end < items.length && turns[end] === k) end += 1;
    const turn = items.slice(k, end);
    if (turns[k] !== k || turn[turn.length - 1].type !== "reasoning") {
      if (written.has(k)) at.push(out.length);
      out.push(items[k]);
      k += 1;
      continue;
    }
    const callIds = turn.filter(isClientCall).map((call) => call.call_id);
    for (const item of plainTurn(turn, callIds)) {
      at.push(out.length);
      out.push(item);
    }
    k = end;
    // its calls' results, right after it, written with it
    while (k < items.length && isClientOutput(items[k]) && callIds.includes(answeredId(items[k]))) {
      at.push(out.length);
      out.push({ ...items[k] });
      k += 1;
    }
  }
  return out.length === items.length && at.length === rewritten.length && items.every((item, j) => item === out[j])
    ? [items, rewritten]
    : [out, at];
}

/** An output written in its call's output type, as the writer writes a result read from another type. */
function inCallType(item: Item, kind: string): Dict {
  const callId = answeredId(item) as string;
  const ofParts = item.type === "function_call_output" || item.type === "custom_tool_call_output" ||
    item.type === "local_shell_call_output";
  if (ofParts && Array.isArray(item.output) && (kind === "function_call" || kind === "custom_tool_call")) {
    // parts, written again as input parts (an error mark first stays first)
    const parts = item.output.map((part: unknown) => (isDict(part) ? outputPart(part) : null));
    if (parts.includes(null)) throw new UnsupportedBodyError("openai_responses", "an output part whose rewriting is not ported");
    const output = parts.map((part: string | Dict) => (typeof part === "string" ? { type: "input_text", text: part } : part));
    return { type: CALL_OUTPUTS[kind], call_id: callId, output: output.length > 0 ? output : "" };
  }
  const read = readClientOutput(item);
  if (read !== null && read.more.length > 0 && (kind === "function_call" || kind === "custom_tool_call")) {
    // (a screenshot, say: its text, then its parts, as input parts)
    const text = read.text ? [{ type: "input_text", text: read.text }] : [];
    const mark = read.isError ? [{ type: "input_text", text: "[error]" }] : [];
    return { type: CALL_OUTPUTS[kind], call_id: callId, output: [...mark, ...text, ...read.more] };
  }
  if (read === null) throw new UnsupportedBodyError("openai_responses", "an output part whose rewriting is not ported");
  if (kind === "local_shell_call" && read.isError && read.texts !== null) {
    // parts in one text, the error mark a line of its own (`write._text_output` of the marked parts)
    return { type: "local_shell_call_output", id: callId, output: ["[error]", ...read.texts].join("\n") };
  }
  if (kind === "computer_call") {
    // its first image (or screenshot by file id) as the screenshot, else a blank one
    const shot = read.more.find((part) => isDict(part) && (part.type === "input_image" || part.type === "computer_screenshot"));
    if (isDict(shot)) {
      const output = shot.type === "input_image" ? { type: "computer_screenshot", image_url: shot.image_url } : shot;
      return { type: "computer_call_output", call_id: callId, output };
    }
  }
  return outputItem(kind, callId, read.text, read.isError); // (the other types take text only: parts beside it are left out)
}

/** The fields of a client call item that are not its payload (`wire.CALL_META`). */
const CALL_META: readonly string[] = ["type", "id", "call_id", "status", "name", "caller", "namespace", "execution"];
const STATUS_REQUIRED: readonly unknown[] = ["local_shell_call", "apply_patch_call", "computer_call"];

/** A client call other than a function as Python's writer writes it in its plain shape (`write.call_item` of the
 * call `read._read_other_call` reads): its own item id, the call id, its payload, its status. */
function clientCallItem(item: Dict, callId: string): Dict {
  const kind = item.type as string;
  const out: Dict = { type: kind };
  if (typeof item.id === "string") out.id = item.id;
  out.call_id = callId;
  const payload = (): Dict => {
    const fields: Dict = {};
    for (const key in item) if (!CALL_META.includes(key)) fields[key] = item[key];
    return fields;
  };
  if (kind === "custom_tool_call") {
    out.name = typeof item.name === "string" && item.name ? item.name : kind;
    // an input that is not text as the JSON of the arguments it was read into
    out.input = typeof item.input === "string" ? item.input : compactJson({ input: item.input ?? null });
  } else if (kind === "tool_search_call") {
    out.arguments = isDict(item.arguments) ? item.arguments : payload();
    out.execution = "client";
  } else {
    Object.assign(out, payload());
  }
  if (typeof item.status === "string") out.status = item.status;
  else if (STATUS_REQUIRED.includes(kind)) out.status = "completed"; // (required in the SDK's types)
  return out;
}

/** The screenshot of a computer call's output written for a result with no image (a synthetic one): a blank 1x1
 * PNG, as Python's writer sends it (`write.BLANK_PNG`). */
const BLANK_PNG =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** The output item of a result of text (an error or not) answering a client call of type `kind` under `callId`, in
 * that call's output type (`write.result_item`): a synthetic result, or an output written in its call's type. */
function outputItem(kind: string, callId: string, text: string, isError: boolean): Dict {
  const marked = isError ? (text ? `[error] ${text}` : "[error]") : text;
  switch (kind) {
    case "local_shell_call":
      return { type: "local_shell_call_output", id: callId, output: marked }; // (the SDK's type names it id)
    case "shell_call":
      return { type: "shell_call_output", call_id: callId, output: [
        { stdout: isError ? "" : text, stderr: isError ? text : "", outcome: { type: "exit", exit_code: isError ? 1 : 0 } }] };
    case "apply_patch_call":
      return { type: "apply_patch_call_output", call_id: callId, status: isError ? "failed" : "completed", output: text };
    case "computer_call":
      return { type: "computer_call_output", call_id: callId, output: { type: "computer_screenshot", image_url: BLANK_PNG } };
    case "tool_search_call":
      return { type: "tool_search_output", call_id: callId, execution: "client", tools: foundTools(text) };
    default:
      return { type: CALL_OUTPUTS[kind] ?? "function_call_output", call_id: callId, output: marked };
  }
}

/** The tools of a client tool search's result, as its text names them (`write._found_tools`; none else). */
function foundTools(text: string): unknown[] {
  let found: unknown;
  try {
    found = JSON.parse(text);
  } catch {
    return [];
  }
  return isDict(found) && Array.isArray(found.tools) ? found.tools : [];
}

/** What Python's reader makes of a client output (`read.read_result`): whether it failed, its text, its other
 * parts as a note writes them (after its text), and its text parts when it is a list of parts; null for a part
 * this package does not write as Python does. */
function readClientOutput(item: Dict): ReadOutput | null {
  const output = item.output;
  switch (item.type) {
    case "shell_call_output": {
      const texts: string[] = [];
      let failed = false;
      for (const chunk of Array.isArray(output) ? output : []) {
        if (!isDict(chunk)) continue;
        for (const stream of [chunk.stdout, chunk.stderr]) if (typeof stream === "string" && stream) texts.push(stream);
        const outcome = chunk.outcome;
        if (isDict(outcome) && (outcome.type !== "exit" || outcome.exit_code !== 0)) failed = true;
      }
      return textOutput(failed, texts.join("\n"));
    }
    case "apply_patch_call_output":
      return textOutput(item.status === "failed", typeof output === "string" ? output : "");
    case "computer_call_output": {
      if (!isDict(output)) return textOutput(false, "");
      const part = outputPart(output);
      if (part === null) return null;
      return typeof part === "string" ? textOutput(false, part) : { isError: false, text: "", more: [part], texts: null };
    }
    case "tool_search_output": {
      const tools = item.tools;
      return textOutput(false, Array.isArray(tools) ? compactJson({ tools }) : "");
    }
  }
  // a function's, a custom tool's and a local shell's output: text, error-marked, or parts
  const value = output ?? "";
  if (typeof value === "string") {
    if (value === "[error]") return textOutput(true, "");
    if (value.startsWith("[error] ")) return textOutput(true, value.slice(8));
    return textOutput(false, value);
  }
  if (isDict(value)) return { isError: false, text: "", more: [value], texts: null }; // (kept as it is)
  if (!Array.isArray(value)) return null;
  const texts: string[] = [];
  const more: unknown[] = [];
  let isError = false;
  for (const [j, raw] of value.entries()) {
    const part = isDict(raw) ? outputPart(raw) : null;
    if (part === null) return null;
    if (typeof part !== "string") more.push(part);
    else if (j === 0 && part === "[error]") isError = true;
    else texts.push(part);
  }
  return { isError, text: texts.join("\n"), more, texts };
}

/** A client output as its reader reads it: `texts` are its text parts when it is a list of parts, else null. */
interface ReadOutput {
  isError: boolean;
  text: string;
  more: unknown[];
  texts: string[] | null;
}

function textOutput(isError: boolean, text: string): ReadOutput {
  return { isError, text, more: [], texts: null };
}

/** A content part of an output as Python's reader reads it and its writer writes it back in a note: a text or a
 * refusal as its string, an image by URL as an `input_image` (detail "auto"; a data URL naming no media type names
 * application/octet-stream), audio as an inline `input_file`, a file or a part it does not name as it is; null for
 * a part Python's reader refuses (a text part without its text, an image whose URL is not a string or empty). */
function outputPart(part: Dict): string | Dict | null {
  const kind = part.type;
  if (kind === "input_text" || kind === "output_text" || kind === "text") {
    return typeof part.text === "string" ? part.text : null;
  }
  if (kind === "refusal" && typeof part.refusal === "string") return part.refusal;
  if (kind === "input_image" || kind === "computer_screenshot") {
    const url = part.image_url;
    if (url === undefined || url === null) return part;
    if (typeof url !== "string" || !url) return null;
    const untyped = url.startsWith("data:;base64,"); // (`parse_data_url`'s default type)
    return { type: "input_image", image_url: untyped ? `data:application/octet-stream${url.slice(5)}` : url, detail: "auto" };
  }
  const audio = part.input_audio;
  if (kind === "input_audio" && isDict(audio) && typeof audio.data === "string" && typeof audio.format === "string") {
    return { type: "input_file", file_data: `data:audio/${audio.format};base64,${audio.data}` };
  }
  return part; // (a file as the writer writes it back, or a part it keeps as it is)
}

/** `json.dumps(value, separators=(",", ":"), ensure_ascii=False)` of a JSON value (its numbers: `pythonNumber`). */
function compactJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(compactJson).join(",")}]`;
  if (isDict(value)) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${compactJson(v)}`).join(",")}}`;
  if (typeof value === "number") return pythonNumber(value);
  return JSON.stringify(value);
}

const openaiResponses: Adapter = {
  name: "openai_responses",
  listKey: "input",
  idMaxLength: 64,
  idAlphabet: null,
  namesResults: true, // (Python writes its notes by its neutral route, whose reader names a result after its call)
  blocksKey: null,
  joinsTurns: false,
  refused: (report) =>
    report.interrupted.length > 0 && !(report.moved || report.notes || report.renamed || report.dropped),
  takesStubs: () => true,
  // (Python's stubs take no message item of the assistant's and no input text parts; its hooks write no renamed
  // call or result and no note)
  neutralInPython: (items, plan) =>
    plan.steps.some((step) => step[0] === CALL || step[0] === ANSWER || step[0] === NOTE) ||
    !items.every(strictlyPlainItem),
  // (a list still breaking a rule after repair, Python's neutral route writes whole: the writer gives back the items
  // the assembly has, but an assistant message standing alone whose item id was already sent, in its plain shape)
  wholeList: responsesWholeList,
  unkeptTurns: responsesUnkeptTurns,
  // Items chatmend does not model (reasoning, hosted tools' calls, computer calls and their outputs, an output
  // message's id, status and annotations, images and files) ride along in the assistant turn they stand in, or open
  // one: only the ids repair pairs by matter here.
  stubs(items) {
    const kinds: number[] = [];
    const refs: Ref[] = [];
    const starts: number[] = [];
    let calls: string[] | null = null; // the call ids of the turn being read
    let said = false; // the turn being read holds the assistant's message
    let unsentAlone = false; // a reasoning item met
    // (as Python's reader joins items into a turn: replayed items, with item ids, and plain ones are never mixed)
    let replayed = false; // the turn being read holds a message, reasoning or a call
    let allIds = true; // each of them has an item id
    const mixes = (item: Dict) => replayed && (typeof item.id === "string") !== allIds;
    const joined = (item: Dict) => {
      replayed = true;
      allIds &&= typeof item.id === "string";
    };
    for (const item of items) {
      if (!isDict(item)) return null;
      const kind = item.type;
      if (isClientCall(item)) {
        const { call_id: callId, name } = item;
        const args = item.arguments;
        if (kind === "function_call" && (typeof name !== "string" || !name || !(args === undefined || args === null || typeof args === "string" || isDict(args)))) {
          return null;
        }
        if (calls !== null && mixes(item)) calls = null; // (a call with an item id after calls without, say)
        if (calls === null) {
          // the call opens a turn
          calls = [];
          kinds.push(CALLS);
          refs.push(null);
          said = false;
          replayed = false;
          allIds = true;
        }
        joined(item);
        starts.push(kinds.length - 1);
        calls.push(callId as string);
        kinds[kinds.length - 1] = CALLS; // (a reply that said something first: its calls join its message)
        refs[refs.length - 1] = calls; // (the turn's own list, which grows with its calls until the turn ends)
        continue;
      }
      if (isClientOutput(item)) {
        calls = null;
        starts.push(kinds.length);
        const answered = answeredId(item);
        if (typeof answered !== "string") return null;
        if (kind === "function_call_output" && !(item.output === undefined || item.output === null || typeof item.output === "string" || Array.isArray(item.output) || isDict(item.output))) {
          return null;
        }
        kinds.push(RESULT);
        refs.push(answered);
        continue;
      }
      if (INPUT_SIDE.includes(kind)) {
        // an item the caller writes: read as a user message holding it
        calls = null;
        starts.push(kinds.length);
        kinds.push(OTHER);
        refs.push(null);
        continue;
      }
      if ((kind === undefined || kind === "message") && INPUT_ROLES.includes(item.role)) {
        // words, or input parts (as the writer writes a note)
        calls = null;
        starts.push(kinds.length);
        const content = item.content;
        if (typeof content !== "string" && !Array.isArray(content)) return null;
        kinds.push(OTHER);
        refs.push(null);
        continue;
      }
      const reply = (kind === "message" || kind === undefined) && item.role === "assistant";
      if (reply ? typeof item.content !== "string" && !Array.isArray(item.content) : typeof kind !== "string" || "role" in item) {
        return null;
      }
      const named = reply || kind === "reasoning"; // (the items a turn's ids are judged by)
      const apart = named && calls !== null && (mixes(item) || (reply && typeof item.id !== "string" && (calls.length > 0 || said)));
      if (calls === null || apart) {
        // the assistant's message (or an item of its turn) opens the turn: the calls after it join it
        starts.push(kinds.length);
        kinds.push(REPLY);
        refs.push(null);
        calls = [];
        said = false;
        replayed = false;
        allIds = true;
      } else {
        starts.push(kinds.length - 1); // (an item of the turn being read: its reasoning, hosted tools, message)
      }
      if (named) joined(item);
      if (kind === "reasoning") unsentAlone = true;
      said ||= reply;
    }
    starts.push(kinds.length);
    return { kinds, refs, starts, unsentAlone };
  },
  // (the hooks write every client call's steps as Python's writer writes them: `write.call_item`, `result_item`)
  renamedCalls(items, finalIds, before) {
    let k = 0;
    const own = items.flatMap(itemIds); // (none in an agent's plain traffic: then no walk of the items before)
    if (own.length === 0 || !before.some((item) => itemIds(item).some((id) => own.includes(id))) || !sentBefore(before, own)) {
      return items.map((item) => (isClientCall(item) ? { ...item, call_id: finalIds[k++] } : item));
    }
    return plainTurn(items, finalIds); // OR6: an item id already sent
  },
  // (an output is written back as it was read, under its call's new id: a local shell's output names it `id`; one of
  // another type than its call's, a tool search's answered by a function's output, in its call's type)
  renamedResult(piece, finalId, call) {
    const calls = call === null ? [] : call[0].filter(isClientCall);
    const kind = calls[call?.[1].indexOf(finalId) ?? -1]?.type as string | undefined;
    if (kind !== undefined && CALL_OUTPUTS[kind] !== piece.type) return [inCallType({ ...piece, call_id: finalId }, kind)];
    const namedId = piece.type === "local_shell_call_output" && piece.call_id === undefined;
    return [namedId ? { ...piece, id: finalId } : { ...piece, call_id: finalId }];
  },
  note(piece, caller) {
    const read = readClientOutput(piece);
    if (read === null) return null;
    const callId = answeredId(piece) as string;
    const tool = responsesToolName(caller, callId);
    const text = orphanNoteText(tool, callId, read.isError, read.text, read.more.length > 0);
    // the output's images and files follow its note, as the writer writes a user message's parts
    return [{ role: "user", content: [{ type: "input_text", text }, ...read.more] }];
  },
  syntheticResult(items, k, finalId, isReadOnly) {
    const call = items.filter(isClientCall)[k] as Dict;
    const name = clientToolName(call);
    return [outputItem(call.type as string, finalId, syntheticText(name, readsOnly(isReadOnly, name)), true)];
  },
};

// ----------------------------------------------------------------------------------------------- Gemini

const MINTED = "~gemini:";

/** The ids of a plain model turn's calls (a call without one under a minted id); null when the turn is not of
 * text then calls (`spans._model_ids`). */
function plainModelIds(parts: unknown[], index: number): string[] | null {
  const ids: string[] = [];
  for (const part of parts) {
    if (!isDict(part) || size(part) !== 1) return null;
    const text = part.text;
    if (typeof text === "string") {
      if (isBlank(text) || ids.length > 0) return null;
      continue;
    }
    const call = part.functionCall;
    if (!isDict(call) || size(call) !== ("id" in call ? 3 : 2) || !("name" in call && "args" in call)) return null;
    const { name, args } = call;
    const id = call.id ?? "";
    if (typeof name !== "string" || !name || !isDict(args) || typeof id !== "string") return null;
    ids.push(id || `${MINTED}${index}.${ids.length}`);
  }
  return ids;
}

/** A plain functionResponse's own id ("" without one): a name, and `{"output"|"error": text}`; null for any other
 * (`spans._response_id`). */
function plainResponseId(response: unknown): string | null {
  if (!isDict(response) || size(response) !== ("id" in response ? 3 : 2) || !("name" in response && "response" in response)) {
    return null;
  }
  const { name, response: value } = response;
  const own = response.id ?? "";
  if (typeof name !== "string" || !name || typeof own !== "string" || !isDict(value) || size(value) !== 1) return null;
  const text = "output" in value ? value.output : value.error;
  return typeof text === "string" ? own : null;
}

function geminiCalls(content: Item): Dict[] {
  return (content.parts as Dict[]).filter((part) => "functionCall" in part).map((part) => part.functionCall as Dict);
}

/** The `position`-th call of a model content (undefined past its last). */
function geminiCallAt(content: Item, position: number): Dict | undefined {
  let k = 0;
  for (const part of content.parts as Dict[]) {
    if (!("functionCall" in part)) continue;
    if (k === position) return part.functionCall as Dict;
    k += 1;
  }
  return undefined;
}

const gemini: Adapter = {
  name: "gemini",
  listKey: "contents",
  idMaxLength: null,
  idAlphabet: null,
  namesResults: false,
  blocksKey: "parts",
  joinsTurns: true,
  refused: refusedWhenAnsweredOrNoted,
  neutralInPython: () => false,
  takesStubs: () => true,
  // The plain shapes of an agent's traffic, as Python's stubs take them (`gemini/spans.py`): text, calls with object
  // `args`, responses of `{"output"|"error": text}` under their call's name, before the user's words; any other list
  // takes the neutral route, which reads every part. No stubs either for a list with a call the planner renames
  // (known from the ids alone: no plan made in vain, as only the neutral route writes it).
  stubs(items) {
    const kinds: number[] = [];
    const refs: Ref[] = [];
    const starts: number[] = [];
    const offsets: number[] = [];
    let calls: string[] = []; // the call ids of the content before, when it is a model turn
    let afterModel = true; // a call turn needs a user turn before it (GE2)
    const seen = new Set<string>(); // the call ids of the contents before
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (!isDict(item) || size(item) !== 2) return null;
      const { role, parts } = item;
      if (!Array.isArray(parts) || parts.length === 0) return null;
      starts.push(kinds.length);
      if (role === "model") {
        const ids = plainModelIds(parts, i);
        if (ids === null || (ids.length > 0 && afterModel)) return null;
        if (renamedCallIn(ids, seen)) return null; // (the stub route would plan in vain)
        kinds.push(ids.length > 0 ? CALLS : REPLY);
        refs.push(ids.length > 0 ? ids : null);
        offsets.push(0);
        calls = ids;
        afterModel = true;
        continue;
      }
      if (role !== "user") return null;
      let said = false; // a text met: no response may follow it (the reader puts responses first)
      let k = 0;
      for (let at = 0; at < parts.length; at++) {
        const part = parts[at];
        if (!isDict(part) || size(part) !== 1) return null;
        const text = part.text;
        if (typeof text === "string") {
          if (isBlank(text)) return null;
          if (!said) {
            kinds.push(OTHER);
            refs.push(null);
            offsets.push(at);
          }
          said = true;
          continue;
        }
        const own = plainResponseId(part.functionResponse);
        if (own === null || said) return null;
        const callId = own || (k < calls.length ? (calls[k] as string) : "");
        const position = calls.indexOf(callId);
        if (position < 0 || geminiCallAt(items[i - 1], position)?.name !== (part.functionResponse as Dict).name) {
          return null; // the writer writes a response under its call's name, in its call's turn
        }
        kinds.push(RESULT);
        refs.push(callId);
        offsets.push(at);
        k += 1;
      }
      calls = [];
      afterModel = false;
    }
    starts.push(kinds.length);
    return { kinds, refs, starts, offsets };
  },
  // (a renamed call, its result and a note take the neutral route, as in Python: its writer keeps the user turns apart
  // where the assembly would join them)
  renamedCalls: () => null,
  renamedResult: () => null,
  note: () => null,
  syntheticResult(calls, k, finalId, isReadOnly) {
    const call = geminiCalls(calls[0])[k] as Dict;
    const name = call.name as string;
    const text = syntheticText(name, readsOnly(isReadOnly, name));
    const response: Dict = call.id ? { id: finalId, name, response: { error: text } } : { name, response: { error: text } };
    return [{ functionResponse: response }];
  },
};

/** True when the planner renames a call of this model content (an id an earlier call has, `seen`: rule 5), which
 * only the neutral route writes; adds the content's call ids to `seen`. */
function renamedCallIn(ids: readonly string[], seen: Set<string>): boolean {
  let repeated = false;
  for (const id of ids) {
    if (seen.has(id)) repeated = true;
    else seen.add(id);
  }
  return repeated;
}

const ADAPTERS: Record<ProviderName, Adapter> = {
  anthropic,
  openai_chat: openaiChat,
  openai_responses: openaiResponses,
  gemini,
};

export const PROVIDERS: readonly ProviderName[] = Object.keys(ADAPTERS) as ProviderName[];

function adapterOf(provider: ProviderName): Adapter {
  const adapter = ADAPTERS[provider];
  if (adapter === undefined) throw new TypeError(`unknown provider ${JSON.stringify(provider)}; known: ${PROVIDERS.join(", ")}`);
  return adapter;
}

/** True when `body`'s list is of the shapes the adapter's stubs take (what `check` judges, Gemini aside). */
export function readable(provider: ProviderName, body: Record<string, unknown>): boolean {
  const adapter = adapterOf(provider);
  const items = body[adapter.listKey];
  return Array.isArray(items) && adapter.takesStubs(body) && adapter.stubs(items) !== null;
}

const UNSAFE_ID_CHAR = /[^a-zA-Z0-9_-]/gu;

/** True when every final id is a wire id as it is (1 to `idMaxLength` characters of `idAlphabet`). */
function idsFit(adapter: Adapter, finalIds: readonly string[]): boolean {
  const limit = adapter.idMaxLength;
  // (an id of at most `limit` UTF-16 units has at most `limit` code points: only a longer one is counted)
  const fits = (id: string) => limit === null || id.length <= limit || codePoints(id) <= limit;
  return finalIds.every((id) => id.length > 0 && fits(id) && (adapter.idAlphabet?.test(id) ?? true));
}

/**
 * `body` (a request body of `provider`) repaired in its own format, changing only what repair must: the top-level
 * fields stay as they are, and in the conversation list every item repair left alone is the input's own object.
 * A body the provider takes comes back as it is.
 */
export function repairBody(provider: ProviderName, body: Record<string, unknown>, options: RepairBodyOptions = {}): BodyRepair {
  const adapter = adapterOf(provider);
  if (!isDict(body) || !Array.isArray(body[adapter.listKey])) {
    throw new TypeError(`expected a ${provider} body with a '${adapter.listKey}' list`);
  }
  if (holdsLoneSurrogate(body)) {
    // no UTF-8 writer encodes a lone surrogate, and providers refuse it: each becomes U+FFFD first, as in Python,
    // and every item holding one is counted as written anew
    const mended = withoutLoneSurrogates(body);
    const items = mended[adapter.listKey] as Item[];
    const paths = lonePaths(body);
    const repaired = repairList(adapter, mended, items, options.isReadOnly);
    const before = new Set(body[adapter.listKey] as Item[]);
    const list = repaired.body[adapter.listKey] as Item[];
    const fresh = list.flatMap((item, k) => (before.has(item) ? [] : [k]));
    const rewritten = [...new Set([...repaired.rewritten, ...fresh])].sort((x, y) => x - y);
    return { ...afterRepair(adapter, mended, items, { ...repaired, changed: true, rewritten }), mended: paths };
  }
  const items = body[adapter.listKey] as Item[];
  const repaired = repairList(adapter, body, items, options.isReadOnly);
  if (repaired.changed && !adapter.refused(repaired.report) && !listHoldsProblem(provider, body)) {
    // valid as it is: repair changes only what the provider would refuse
    return { body: { ...body }, changed: false, rewritten: [], report: emptyReport(), mended: [] };
  }
  return { ...afterRepair(adapter, body, items, repaired), mended: [] };
}

/** The stub route's repair of a body's list, else the neutral route's. */
function repairList(adapter: Adapter, body: Record<string, unknown>, items: Item[], isReadOnly: IsReadOnly | undefined): ListRepair {
  const stubs = items.length > 0 && adapter.takesStubs(body) ? adapter.stubs(items) : null;
  const stubbed = stubs === null ? null : stubRepair(adapter, body, items, stubs, isReadOnly);
  return stubbed ?? neutralRepair(adapter, body, items, isReadOnly);
}

/** What the adapter does to a repaired body beyond repair (Python's `_after_repair`): Anthropic's default thinking
 * policy where Python's neutral route repairs the body. */
function afterRepair(adapter: Adapter, body: Record<string, unknown>, items: Item[], repaired: ListRepair): ListRepair {
  if (adapter.name === "anthropic" && repaired.changed && anthropicNeutralInPython(items, body)) {
    return droppingThinking(items, repaired);
  }
  return repaired;
}

/** `value` with every lone surrogate of its strings and keys replaced by U+FFFD (Python's `without_lone_surrogates`):
 * only the containers on the way to a changed string are new. */
function withoutLoneSurrogates<T>(value: T): T {
  if (typeof value === "string") return (value.isWellFormed() ? value : value.toWellFormed()) as T;
  if (typeof value !== "object" || value === null || !holdsLoneSurrogate(value)) return value;
  if (Array.isArray(value)) return value.map(withoutLoneSurrogates) as T;
  const out: Dict = {};
  for (const [key, inner] of Object.entries(value)) out[key.toWellFormed()] = withoutLoneSurrogates(inner);
  return out as T;
}

const SIGNED_THINKING = new Set(["thinking", "redacted_thinking"]);

/** Anthropic's thinking policy "drop" (Python's default): the signed thinking of every assistant turn after the
 * first item repair changed, but the last assistant turn's, left out; the repair as it was when that would break
 * a rule `check` knows. */
function droppingThinking(before: readonly unknown[], repaired: ListRepair): ListRepair {
  const items = repaired.body.messages as unknown[];
  const first = items.findIndex((item, q) => q >= before.length || item !== before[q]);
  if (first < 0) return repaired;
  const protectedAt = lastAssistantTurn(items);
  const newItems = [...items];
  const dropped: number[] = [];
  for (let q = first + 1; q < protectedAt; q++) {
    const item = items[q];
    if (!signedThinkingAt(item)) continue;
    const content = (item as Dict).content as unknown[];
    const kept = content.filter((b) => !(isDict(b) && SIGNED_THINKING.has(b.type as string)));
    if (kept.length === 0) continue; // thinking alone (AT7 breaks it anyway): nothing would be left to send
    newItems[q] = { ...(item as Dict), content: kept };
    dropped.push(q);
  }
  if (dropped.length === 0) return repaired;
  const body = { ...repaired.body, messages: newItems };
  if (listHoldsProblem("anthropic", body)) return repaired; // a rule the drop would break
  const rewritten = [...new Set([...repaired.rewritten, ...dropped])].sort((a, b) => a - b);
  return { ...repaired, body, rewritten };
}

/** True for an assistant wire message holding a thinking or redacted_thinking block. */
function signedThinkingAt(item: unknown): boolean {
  if (!isDict(item) || item.role !== "assistant" || !Array.isArray(item.content)) return false;
  return item.content.some((b) => isDict(b) && SIGNED_THINKING.has(b.type as string));
}

/** The first wire message of the last run of assistant messages (the list's length when there is none). */
function lastAssistantTurn(items: readonly unknown[]): number {
  const assistant = (k: number) => {
    const item = items[k];
    return isDict(item) && item.role === "assistant";
  };
  let k = items.length;
  while (k > 0 && !assistant(k - 1)) k -= 1;
  if (k === 0) return items.length;
  k -= 1;
  while (k > 0 && assistant(k - 1)) k -= 1;
  return k;
}

function reportChanged(report: BodyReport): boolean {
  return report.interrupted.length + report.moved + report.notes + report.renamed + report.dropped > 0;
}

/** The stub route: the adapter stubs its items, the planner plans, the plan is assembled from the input's items
 * and the adapter's writer; null for what it cannot write (an id the provider would not take, a step the adapter
 * has no hook for): the neutral route's. */
function stubRepair(
  adapter: Adapter,
  body: Record<string, unknown>,
  items: Item[],
  stubs: Stubs,
  isReadOnly: IsReadOnly | undefined,
): ListRepair | null {
  const plan = planSpans(stubs.kinds, stubs.refs, { nameNotes: adapter.namesResults });
  const report: BodyReport = {
    interrupted: plan.interrupted,
    moved: plan.moved.length,
    notes: plan.notes.length,
    renamed: plan.renamed.length,
    dropped: plan.dropped.length,
  };
  const changed = reportChanged(report);
  const fits = idsFit(adapter, plan.finalIds);
  // (whether Python repairs the body by its neutral route: asked only where the answer would change the list)
  let neutralKnown: boolean | undefined;
  const neutral = (): boolean => {
    if (neutralKnown === undefined) neutralKnown = adapter.neutralInPython(items, plan, body);
    return neutralKnown;
  };
  let assembled: [Item[], number[]] | null = [items, []];
  if (!fits || !planUnchanged(plan)) {
    let planned = fits ? plan : underWireIds(adapter, plan, stubs);
    if (fits && keptBetween(plan.steps) && neutral()) {
      planned = { ...plan, steps: answeredBetween(plan.steps, stubs, (id) => id) };
    }
    assembled = assemble(adapter, items, stubs, planned, isReadOnly);
    if (assembled === null) return null;
  }
  if (changed && stubs.unsentAlone && adapter.unkeptTurns !== undefined && neutral()) {
    assembled = adapter.unkeptTurns(assembled[0], assembled[1]);
  }
  if (stubs.movesOut && adapter.movedOut !== undefined && assembled[0] !== items) {
    const moved = adapter.movedOut(assembled[0], assembled[1], items);
    // (null: Python's neutral route writes the whole list all the same)
    const list = moved ?? (adapter.wholeList as NonNullable<Adapter["wholeList"]>)(assembled[0], items);
    assembled = moved ?? [list, list.map((_, k) => k)];
  }
  const key = adapter.listKey;
  if (adapter.name === "gemini" && listHoldsProblem(adapter.name, { ...body, [key]: assembled[0] })) {
    return null; // a rule of Gemini's own beyond pairing (GE10, a part's shape): the neutral route's writer knows it
  }
  // (Chat's list still breaks a rule where it holds images its writer moves or a malformed message: SHAPE)
  if (adapter.wholeList !== undefined && neutral() && listHoldsProblem(adapter.name, { ...body, [key]: assembled[0] })) {
    // the list breaks a rule of the wire beyond pairing: Python's neutral route writes it whole
    const list = (adapter.wholeList as NonNullable<Adapter["wholeList"]>)(assembled[0], items);
    assembled = [list, list.map((_, k) => k)];
  }
  if (assembled[0] === items) return { body: { ...body }, changed, rewritten: [], report };
  return originalsKept(body, key, items, [...assembled[0]], assembled[1], changed, report);
}

/** `plan` with every call under its wire id (ids the provider would not take as they are mapped, as Python's
 * writers map them): a kept call message whose wire ids differ from its own is renamed, and so are its results. */
function underWireIds(adapter: Adapter, plan: SpanPlan, stubs: Stubs): SpanPlan {
  const limit = adapter.idMaxLength as number;
  const make = adapter.idAlphabet === null ? shorteningIdMaker(limit) : sanitizingIdMaker(limit, UNSAFE_ID_CHAR);
  const wire = wireIds(make, plan.finalIds);
  const wireOf = new Map(plan.finalIds.map((id, k) => [id, wire[k] as string]));
  const mapped = (id: string): string => wireOf.get(id) ?? id;
  const steps: Step[] = [];
  const keep = (from: number, to: number) => {
    if (from < to) steps.push([KEEP, from, to]);
  };
  let renamed = new Set<string>(); // the calls of the message last renamed: its results are answered anew
  for (const step of plan.steps) {
    if (step[0] === CALL) steps.push([CALL, step[1], step[2].map((id) => (id === null ? null : mapped(id)))]);
    else if (step[0] === ANSWER) steps.push([ANSWER, step[1], mapped(step[2])]);
    else if (step[0] === SYNTHETIC) steps.push([SYNTHETIC, step[1], [step[2][0], mapped(step[2][1])]]);
    else if (step[0] === NOTE) steps.push(step);
    else {
      let from = step[1];
      for (let m = step[1]; m < step[2]; m++) {
        const ref = stubs.refs[m];
        if (typeof ref === "string" && (renamed.has(ref) || mapped(ref) !== ref)) {
          keep(from, m);
          steps.push([ANSWER, m, mapped(ref)]);
          from = m + 1;
          continue;
        }
        if (typeof ref === "string") continue;
        renamed = new Set();
        if (ref === null || ref === undefined || ref.every((id) => mapped(id) === id)) continue;
        keep(from, m);
        steps.push([CALL, m, ref.map(mapped)]);
        renamed = new Set(ref);
        from = m + 1;
      }
      keep(from, step[2]);
    }
  }
  return { ...plan, steps: answeredBetween(steps, stubs, mapped), finalIds: wire };
}

/** True when a kept stretch stands between two new results (most plans have none: `answeredBetween` changes no step
 * then, and needs no map of the calls). */
function keptBetween(steps: Step[]): boolean {
  const answers = (k: number) => steps[k]?.[0] === ANSWER || steps[k]?.[0] === SYNTHETIC;
  for (let k = 1; k + 1 < steps.length; k++) if (steps[k]?.[0] === KEEP && answers(k - 1) && answers(k + 1)) return true;
  return false;
}

/** `steps` with the kept results that stand between two new results of one call message answered anew too: the
 * neutral route writes such results in one run with those around them. */
function answeredBetween(steps: Step[], stubs: Stubs, mapped: (id: string) => string): Step[] {
  if (!keptBetween(steps)) return steps;
  const callOf = new Map<string, number>(); // wire id -> the message of its call
  const leads = steps.map((step): number | null => {
    if (step[0] === CALL) {
      for (const id of step[2]) if (id !== null) callOf.set(id, step[1]);
    } else if (step[0] === KEEP) {
      for (let m = step[1]; m < step[2]; m++) {
        const ref = stubs.refs[m];
        if (Array.isArray(ref)) for (const id of ref) callOf.set(mapped(id), m);
      }
    }
    if (step[0] === SYNTHETIC) return step[1];
    return step[0] === ANSWER ? (callOf.get(step[2]) ?? null) : null;
  });
  const out: Step[] = [];
  steps.forEach((step, i) => {
    const before = leads[i - 1];
    const between = step[0] === KEEP && before != null && before === leads[i + 1];
    if (!between || !range(step[1], step[2]).every((m) => typeof stubs.refs[m] === "string")) {
      out.push(step);
      return;
    }
    for (let m = step[1]; m < step[2]; m++) out.push([ANSWER, m, mapped(stubs.refs[m] as string)]);
  });
  return out;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(to - from, 0) }, (_, k) => from + k);
}

/** The neutral route: the list read into neutral messages, repaired by `repairHistory`, the runs repair changed
 * written anew by the adapter's writer (Gemini's; any other adapter's body of this kind is refused). */
function neutralRepair(
  adapter: Adapter,
  body: Record<string, unknown>,
  items: Item[],
  isReadOnly: IsReadOnly | undefined,
): ListRepair {
  if (items.length === 0 && adapter.name !== "gemini") {
    return { body: { ...body }, changed: false, rewritten: [], report: emptyReport() }; // the writer writes none
  }
  if (adapter.name !== "gemini") {
    throw new UnsupportedBodyError(adapter.name, "a body only the neutral route repairs (shapes or ids the stubs do not take)");
  }
  const groups = readGroups(items);
  if (groups === null) {
    const why = "contents of shapes this package does not read (parts other than text, functionCall and " +
      "functionResponse, or no role)";
    throw new UnsupportedBodyError(adapter.name, why);
  }
  const flat: ChatMessage[] = []; // (a plain loop: Array.prototype.flat is slow on many small groups)
  for (const group of groups) for (const message of group) flat.push(message);
  const [result, sources] = repairTraced(flat, isReadOnly === undefined ? {} : { isReadOnly });
  const report: BodyReport = {
    interrupted: result.interrupted.map((call) => call.id),
    moved: result.moved.length,
    notes: result.notes.length,
    renamed: result.renamed.length,
    dropped: result.dropped.length + result.stripped.length,
  };
  const changed = reportChanged(report);
  let [newItems, rewritten]: [readonly unknown[], number[]] =
    !changed && result.messages.length === flat.length ? [items, []] : rewriteContents(items, groups, flat.length, result, sources);
  const key = adapter.listKey;
  if (listHoldsProblem(adapter.name, { ...body, [key]: newItems })) {
    // the list breaks a rule of the wire beyond pairing: the writer knows them, so the whole list is written anew
    newItems = writeRun(result.messages, 0);
    rewritten = newItems.map((_, k) => k);
  }
  if (newItems === items) return { body: { ...body }, changed, rewritten: [], report };
  return originalsKept(body, key, items, [...newItems], rewritten, changed, report);
}

/** The repair of a list written as `newItems`: an item written anew that is the same JSON as the input's item at
 * its place is kept as the input's own object, and not counted as rewritten. */
function originalsKept(
  body: Record<string, unknown>,
  key: string,
  items: readonly unknown[],
  newItems: unknown[],
  written: readonly number[],
  changed: boolean,
  report: BodyReport,
): ListRepair {
  const rewritten = written.filter((k) => {
    if (k >= items.length || k >= newItems.length || !sameJson(newItems[k], items[k])) return true;
    newItems[k] = items[k];
    return false;
  });
  return { body: { ...body, [key]: newItems }, changed: changed || rewritten.length > 0, rewritten, report };
}

/** True when two JSON values are equal, keys in any order (the first difference ends the walk). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let k = 0; k < a.length; k++) if (!sameJson(a[k], b[k])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  // (for-in lists no key array: this runs on every item written anew)
  let size = 0;
  for (const _key in b) size += 1;
  for (const key in a) {
    if (!Object.hasOwn(b, key) || !sameJson((a as Dict)[key], (b as Dict)[key])) return false;
    size -= 1;
  }
  return size === 0;
}

function emptyReport(): BodyReport {
  return { interrupted: [], moved: 0, notes: 0, renamed: 0, dropped: 0 };
}
