/**
 * Gemini's neutral route for `repairBody` (the port of Python's `providers/gemini/read.py`, `write.py` and the
 * adapter's `_rebuild`): the contents read into neutral messages, every field chatmend does not model kept in
 * `provider_data` (or a part it does not model kept whole, as a native part) and written back where it was. A model
 * content is one assistant message (thoughts and thought signatures as thinking parts, calls as tool calls); a user
 * content is a tool message per response (one without an id answers the call at its position in the content before),
 * then one user message of its other parts. A call without an id is read under a minted one and written back without
 * it. A content this reader does not take (Python's reader would refuse it, or a value whose Python form is not
 * ported) makes `readGroups` return null.
 */

import {
  type ChatMessage,
  type FilePart,
  type ImagePart,
  isDict,
  type JsonValue,
  type NativePart,
  pythonNumber,
  type Part,
  type TextPart,
  type ThinkingPart,
  type ToolCall,
} from "./messages.js";
import { everyItemKept, inOrder, keptItems, planRewrite } from "./neutral.js";
import type { RepairResult } from "./repair.js";

type Dict = Record<string, unknown>;
type Kept = { [key: string]: JsonValue };

const NAME = "gemini";
export const BRIDGE_TEXT = "(continue)";
/** The text before a result's images when they travel after the responses (`wire.IMAGES_LABEL`). */
const IMAGES_LABEL = /^Images from tool result (.+):$/su;
const LABEL_HEAD = "Images from tool result ";
/** The key under which call arguments that are not a JSON object travel (`args` must be an object). */
const RAW_ARGUMENTS_KEY = "_raw";

/** The id a call without one is read under (the stubs' `~gemini:` ids). */
export function mintedId(index: number, k: number): string {
  return `~gemini:${index}.${k}`;
}

// ------------------------------------------------------------------------------------------ the wire's words

/** `inlineData` as the SDK sometimes sends it, `inline_data` (the API takes both). */
export function snakeCase(name: string): string {
  return name.replace(/(?<!^)([A-Z])/g, "_$1").toLowerCase();
}

/** The snake_case twin of each camelCase field the reader and the checker look up. */
const SNAKE: ReadonlyMap<string, string> = new Map(
  ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult",
    "toolCall", "toolResponse", "thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata",
    "audioTranscription", "mediaProcessing", "speechMetadata", "documentMetadata", "spreadsheetMetadata",
    "audioMetadata", "mimeType", "fileUri", "systemInstruction", "displayName"]
    .map((name) => [name, snakeCase(name)]),
);

/** A field by its camelCase name, or its snake_case twin (`wire.get`); undefined for none (or null). */
export function field(data: Dict, name: string): unknown {
  const value = data[name];
  if (value !== undefined && value !== null) return value;
  const snake = SNAKE.get(name);
  const twin = snake === undefined || snake === name ? undefined : data[snake];
  return twin === null ? undefined : twin;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** True when the API can decode `text` as bytes (standard or URL-safe base64, padding optional). */
export function isBase64(text: unknown): boolean {
  return typeof text === "string" && text.replace(/=+$/, "").length % 4 !== 1 && BASE64.test(text);
}

/** Field names in both spellings the API takes (`wire.spellings`). A short list: `includes` compares the few
 * names faster than a set hashes one (the reader asks it of every field of every content). */
function spellings(...names: string[]): readonly string[] {
  return [...new Set(names.flatMap((name) => [name, snakeCase(name)]))];
}

const BLOB_KEYS: Readonly<Record<string, readonly string[]>> = {
  inlineData: spellings("mimeType", "data"),
  fileData: spellings("mimeType", "fileUri"),
};
const MEDIA_PART_KEYS: Readonly<Record<string, readonly string[]>> = {
  inlineData: spellings("inlineData"),
  fileData: spellings("fileData"),
};
const SIGNED_MEDIA_KEYS: Readonly<Record<string, readonly string[]>> = {
  inlineData: spellings("inlineData", "thoughtSignature"),
  fileData: spellings("fileData", "thoughtSignature"),
};
const USER_TEXT_KEYS: readonly string[] = ["text"];
const MODEL_TEXT_KEYS = spellings("text", "thoughtSignature");
const THOUGHT_KEYS = spellings("text", "thought", "thoughtSignature");
const CALL_PART_KEYS = spellings("functionCall", "thoughtSignature");
const CALL_KEYS: readonly string[] = ["id", "name", "args"];
const RESPONSE_PART_KEYS = spellings("functionResponse");
const RESPONSE_KEYS: readonly string[] = ["id", "name", "response", "parts"];
const CONTENT_KEYS: readonly string[] = ["role", "parts"];
const READ_KINDS = ["text", "inlineData", "fileData", "functionCall", "functionResponse"] as const;

/** Python's `json.dumps(value, ensure_ascii=False)` of a JSON value (its numbers: `pythonNumber`). */
function pyJson(value: unknown): string {
  if (typeof value === "number") return pythonNumber(value);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (isDict(value)) {
    const items: string[] = [];
    for (const key in value) items.push(`${JSON.stringify(key)}: ${pyJson(value[key])}`);
    return `{${items.join(", ")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** A response object as a tool result's text, whether it is an error (`wire.response_text`), and whether it says
 * no more than that (`{"output": text}` or `{"error": text}`, which the writer writes again). */
function responseText(response: unknown): { text: string; isError: boolean; plain: boolean } {
  if (response === undefined || response === null) return { text: "", isError: false, plain: false };
  let value: unknown = response;
  let isError = false;
  const sole = isDict(response) && ("output" in response || "error" in response) && soleKey(response) !== null;
  if (sole) {
    isError = "error" in response;
    value = isError ? response.error : response.output;
  }
  if (typeof value === "string") return { text: value, isError, plain: sole };
  return { text: pyJson(value), isError, plain: false };
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

// ---------------------------------------------------------------------------------------------- reading

/** Thrown by the reader for a content Python's reader refuses or whose reading is not ported (`readGroups`: null). */
const UNREAD = Symbol("a content this reader does not take");

function kept(data: { provider_data?: { [provider: string]: JsonValue } }): Kept | null {
  const value = data.provider_data?.[NAME];
  return isDict(value) ? (value as Kept) : null;
}

/** The fields of `data` the neutral model does not name (null when there are none). */
function extras(data: Dict, modelled: readonly string[]): Kept | null {
  let out: Kept | null = null;
  for (const key in data) {
    if (modelled.includes(key)) continue;
    out ??= {};
    out[key] = data[key] as JsonValue;
  }
  return out;
}

/** `into` with the fields of `data` the neutral model does not name under `key`, if any (made when needed: most
 * parts keep nothing). */
function keepExtras(into: Kept | null, key: string, data: Dict, modelled: readonly string[]): Kept | null {
  const found = extras(data, modelled);
  if (found === null) return into;
  const out = into ?? {};
  out[key] = found;
  return out;
}

function withKept<T extends { provider_data?: { [provider: string]: JsonValue } }>(value: T, into: Kept | null): T {
  if (into !== null) value.provider_data = { [NAME]: into };
  return value;
}

/** A string field (either spelling): undefined when absent; refused when not a string. */
function optionalString(data: Dict, name: string): string | undefined {
  const value = field(data, name);
  if (value !== undefined && typeof value !== "string") throw UNREAD;
  return value;
}

function asDict(value: unknown): Dict {
  if (!isDict(value)) throw UNREAD;
  return value;
}

/** Each field name of the kinds chatmend reads, in both spellings, at the kind's place in READ_KINDS (twice). */
const READ_KIND_NAMES: readonly string[] = READ_KINDS.flatMap((name) => [name, snakeCase(name)]);

type ReadKind = (typeof READ_KINDS)[number];

/** What the reader asks of a part, its own fields walked once (a part has one or two): the data field chatmend reads
 * (the first of READ_KINDS it holds; null for any other kind, kept as a native part), whether it holds a function
 * response (a user turn reads it as one, whatever else it holds), and whether that field is its only one (then it
 * keeps nothing beside it: no signature, no extras). */
function kindOf(part: Dict): { kind: ReadKind | null; responds: boolean; single: boolean } {
  let found: number = READ_KINDS.length;
  let keys = 0;
  for (const key in part) {
    keys += 1;
    const k = READ_KIND_NAMES.indexOf(key) >> 1;
    if (k >= 0 && k < found && part[key] !== null && part[key] !== undefined) found = k;
  }
  const kind = found < READ_KINDS.length ? (READ_KINDS[found] as ReadKind) : null;
  const responds = kind === "functionResponse" || (keys > 1 && field(part, "functionResponse") !== undefined);
  return { kind, responds, single: keys === 1 };
}

function native(part: Dict): NativePart {
  return { type: "native", provider: NAME, data: part as { [key: string]: JsonValue } };
}

/** An `inlineData` or `fileData` part: an image as an image part, anything else as a file part; its other fields
 * kept. */
function media(part: Dict, kind: string, modelled: readonly string[], single: boolean): ImagePart | FilePart {
  const blob = asDict(field(part, kind));
  const mime = optionalString(blob, "mimeType");
  const into = keepExtras(single ? null : keepExtras(null, "part", part, modelled), kind, blob,
    BLOB_KEYS[kind] as readonly string[]);
  if (kind === "inlineData") {
    const mediaType = mime || "application/octet-stream";
    const data = optionalString(blob, "data") || "";
    if (mediaType.startsWith("image/")) return withKept<ImagePart>({ type: "image", media_type: mediaType, data }, into);
    return withKept<FilePart>({ type: "file", media_type: mediaType, data }, into);
  }
  const uri = optionalString(blob, "fileUri") || "";
  const read: { url: string; media_type?: string } = mime ? { url: uri, media_type: mime } : { url: uri };
  if ((mime || mediaTypeOf(uri) || "").startsWith("image/")) return withKept<ImagePart>({ type: "image", ...read }, into);
  return withKept<FilePart>({ type: "file", ...read }, into);
}

/** The MIME type of a file URI by its suffix, in Gemini's own spelling (Python's `gemini.wire.MEDIA_TYPES`). */
const MEDIA_TYPES: ReadonlyMap<string, string> = new Map(Object.entries({
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", webp: "image/webp", heic: "image/heic",
  heif: "image/heif", gif: "image/gif",
  wav: "audio/wav", mp3: "audio/mp3", aiff: "audio/aiff", aac: "audio/aac", ogg: "audio/ogg", flac: "audio/flac",
  mp4: "video/mp4", mpeg: "video/mpeg", mov: "video/mov", avi: "video/avi", flv: "video/x-flv", mpg: "video/mpg",
  webm: "video/webm", wmv: "video/wmv", "3gp": "video/3gpp",
  pdf: "application/pdf", txt: "text/plain",
}));

/** The MIME type a file URI names: a `data:` URI's own, else its path's suffix in `MEDIA_TYPES`. */
export function mediaTypeOf(uri: string): string | undefined {
  if (uri.slice(0, 5).toLowerCase() === "data:") {
    const declared = (uri.slice(5).split(/[;,]/, 1)[0] ?? "").trim().toLowerCase();
    return declared || undefined;
  }
  const name = (uri.split(/[?#]/, 1)[0] ?? "").split("/").pop() ?? "";
  const dot = name.lastIndexOf(".");
  return dot < 0 ? undefined : MEDIA_TYPES.get(name.slice(dot + 1).toLowerCase());
}

/** A text part as read: a plain text as its string (made a part by `plainest` when its content holds more), a
 * text with fields beside it as a text part; null for an empty text (kept, marked, with `keepEmpty`). */
function textPart(part: Dict, modelled: readonly string[], keepEmpty: boolean, single: boolean): TextPart | string | null {
  const text = optionalString(part, "text") || "";
  const more = single ? null : extras(part, modelled);
  if (!text && more === null) return keepEmpty ? { type: "text", text: "", provider_data: { [NAME]: {} } } : null;
  return more === null ? text : { type: "text", text, provider_data: { [NAME]: { part: more } } };
}

/** A user-side part: text, image or file, a native part for a kind chatmend does not model; null for an empty text
 * (kept, marked, with `keepEmpty`). */
function readPlain(part: Dict, keepEmpty: boolean, { kind, single }: { kind: ReadKind | null; single: boolean }): Part | string | null {
  if (kind === "text") return textPart(part, USER_TEXT_KEYS, keepEmpty, single);
  if (kind === "inlineData" || kind === "fileData") {
    return media(part, kind, MEDIA_PART_KEYS[kind] as readonly string[], single);
  }
  return native(part);
}

/** The content the way readers give it most simply: one plain text part (or none) as a string. */
function plainest(parts: (Part | string)[]): string | Part[] {
  if (parts.length === 0) return "";
  const first = parts[0] as Part | string;
  if (parts.length === 1 && typeof first === "string") return first;
  return parts.map((part) => (typeof part === "string" ? { type: "text", text: part } : part));
}

function readArguments(args: unknown): { [key: string]: JsonValue } | string {
  if (args === undefined || args === null) return {};
  if (!isDict(args)) return pyJson(args);
  const raw = args[RAW_ARGUMENTS_KEY];
  if (typeof raw === "string" && soleKey(args) === RAW_ARGUMENTS_KEY) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return raw;
    }
    if (!isDict(parsed)) return raw;
  }
  return args as { [key: string]: JsonValue }; // the input's own object: written as it was read
}

function readCall(part: Dict, signature: unknown, index: number, k: number, single: boolean): ToolCall {
  const fc = asDict(field(part, "functionCall"));
  const name = fc.name;
  if (typeof name !== "string" || !name) throw UNREAD;
  let id = optionalString(fc, "id") || "";
  let into: Kept | null = signature ? { thoughtSignature: signature as JsonValue } : null;
  if (!single) into = keepExtras(into, "part", part, CALL_PART_KEYS);
  into = keepExtras(into, "functionCall", fc, CALL_KEYS);
  if (!id) {
    id = mintedId(index, k);
    into = { ...into, noId: true }; // written back without one
  }
  // (one literal, every field in it: the messages and calls the reader makes share their shapes)
  return { id, name, arguments: readArguments(fc.args), provider_data: into === null ? undefined : { [NAME]: into } };
}

function readModel(parts: unknown[], index: number): ChatMessage {
  const content: (Part | string)[] = [];
  let calls: ToolCall[] | null = null; // (built for a content that has calls)
  for (const raw of parts) {
    const part = asDict(raw);
    const { kind, single } = kindOf(part);
    if (kind === null || kind === "functionResponse") {
      content.push(native(part)); // (a response in a model turn: kept as it stands)
      continue;
    }
    const signed = single ? undefined : field(part, "thoughtSignature");
    if (signed !== undefined && typeof signed !== "string") throw UNREAD;
    const signature = signed as string | undefined;
    if (kind === "functionCall") {
      const call = readCall(part, signature, index, calls?.length ?? 0, single);
      if (calls === null) calls = [call];
      else calls.push(call);
      continue;
    }
    if (kind === "text" && part.thought) {
      const more = extras(part, THOUGHT_KEYS);
      const thought: ThinkingPart = { type: "thinking", text: optionalString(part, "text") || "", provider: NAME };
      if (signature !== undefined) thought.signature = signature;
      if (more !== null) thought.provider_data = { [NAME]: { part: more } };
      content.push(thought);
      continue;
    }
    let item: Part | string | null;
    if (kind === "text") {
      item = textPart(part, MODEL_TEXT_KEYS, false, single);
      if (item === null && signature) item = { type: "text", text: "" }; // (Gemini 3 sends signed empty texts)
    } else {
      item = media(part, kind, SIGNED_MEDIA_KEYS[kind] as readonly string[], single);
    }
    if (signature) content.push({ type: "thinking", text: "", signature, provider: NAME }); // (carried to the next part)
    if (item !== null) content.push(item);
  }
  return { role: "assistant", content: plainest(content), tool_calls: calls ?? undefined };
}

function readUser(parts: unknown[], calls: readonly ToolCall[]): ChatMessage[] {
  const out: ChatMessage[] = []; // a tool message per response, then one user message of the other parts
  const rest: (Part | string)[] = [];
  let attach = -1; // the tool message the images being read belong to
  for (let j = 0; j < parts.length; j++) {
    const part = asDict(parts[j]);
    const scanned = kindOf(part);
    if (scanned.responds) {
      const fr = asDict(field(part, "functionResponse"));
      const own = optionalString(fr, "id");
      const call = calls[out.length];
      const name = fr.name;
      if (name !== undefined && name !== null && typeof name !== "string") throw UNREAD;
      const said = responseText(fr.response);
      const into = responseKept(part, fr, own, call, said.plain);
      out.push({
        role: "tool",
        tool_call_id: own || (call?.id ?? ""),
        tool_name: name || undefined,
        content: resultContent(said.text, responseMedia(fr.parts)),
        is_error: said.isError || undefined,
        provider_data: into === null ? undefined : { [NAME]: into },
      });
      continue;
    }
    const item = readPlain(part, true, scanned);
    if (item !== null && typeof item !== "string" && (item.type === "image" || item.type === "file") && attach >= 0) {
      const result = out[attach] as ChatMessage;
      const content = result.content ?? "";
      out[attach] = { ...result, content: typeof content === "string" ? resultContent(content, [item]) : [...content, item] };
      continue;
    }
    attach = -1;
    const label = typeof item === "string" && item.startsWith(LABEL_HEAD) ? IMAGES_LABEL.exec(item) : null;
    const labelled = label === null ? -1 : out.findIndex((message) => message.tool_call_id === label[1]);
    if (labelled >= 0 && j + 1 < parts.length && isMedia(parts[j + 1])) {
      attach = labelled;
      continue;
    }
    if (item !== null) rest.push(item);
  }
  if (rest.length > 0) out.push({ role: "user", content: plainest(rest) });
  return out;
}

/** A tool result's content: its text, or with media its text (if any) as a part before them. */
function resultContent(text: string, media: Part[] | null): string | Part[] {
  if (media === null || media.length === 0) return text;
  return text ? [{ type: "text", text }, ...media] : [...media];
}

function isMedia(part: unknown): boolean {
  return isDict(part) && (field(part, "inlineData") !== undefined || field(part, "fileData") !== undefined);
}

/** The media inside `functionResponse.parts`; any other part as it is (null for none). */
function responseMedia(parts: unknown): Part[] | null {
  if (parts === undefined || parts === null) return null;
  if (!Array.isArray(parts)) throw UNREAD;
  return parts.map((raw) => {
    const part = asDict(raw);
    for (const kind of ["inlineData", "fileData"]) {
      if (field(part, kind) !== undefined) return media(part, kind, MEDIA_PART_KEYS[kind] as readonly string[], false);
    }
    return native(part);
  });
}

/** What a functionResponse part holds beyond the neutral tool message (`read._response_kept`); null for nothing. */
function responseKept(part: Dict, fr: Dict, own: string | undefined, call: ToolCall | undefined, plain: boolean): Kept | null {
  let into: Kept | null = null;
  if (!plain) into = { response: (fr.response ?? null) as JsonValue };
  into = keepExtras(keepExtras(into, "functionResponse", fr, RESPONSE_KEYS), "part", part, RESPONSE_PART_KEYS);
  if ("parts" in fr) into = { ...into, inParts: true }; // its media go back inside it
  if (!own && call !== undefined && kept(call)?.noId) into = { ...into, noId: true };
  return into;
}

/** The messages of a content, the content's own fields beside `parts` (an unknown key, a role other than user and
 * model) kept on its first message, and that it is a turn of its own (`separate`: after another user turn). */
function withContentFields(read: ChatMessage[], content: Dict, separate: boolean): ChatMessage[] {
  let fields = extras(content, CONTENT_KEYS);
  const role = content.role;
  if (role !== undefined && role !== null && role !== "user" && role !== "model" && role !== "system") {
    fields = { ...(fields ?? {}), role: role as JsonValue };
  }
  const first = read[0];
  if ((fields === null && !separate) || first === undefined) return read;
  const into: Kept = { ...(kept(first) ?? {}) };
  if (fields !== null) into.content = fields;
  if (separate) into.turn = true;
  read[0] = { ...first, provider_data: { ...(first.provider_data ?? {}), [NAME]: into } };
  return read;
}

const NO_CALLS: readonly ToolCall[] = [];

/** The neutral messages of each content (null when a content is one this reader does not take). */
export function readGroups(items: readonly unknown[]): ChatMessage[][] | null {
  const groups: ChatMessage[][] = [];
  let calls: readonly ToolCall[] = NO_CALLS; // the calls of the content before: the responses of this one answer them
  try {
    for (let i = 0; i < items.length; i++) {
      const content = asDict(items[i]);
      const rawParts = content.parts;
      if (rawParts !== undefined && rawParts !== null && !Array.isArray(rawParts)) throw UNREAD;
      const parts: unknown[] = rawParts ?? [];
      const role = content.role || "user";
      if (role === "model") {
        const message = readModel(parts, i);
        groups.push(withContentFields(message.content || message.tool_calls ? [message] : [], content, false));
        calls = message.tool_calls ?? NO_CALLS;
        continue;
      }
      let read = readUser(parts, calls);
      if (role === "system") read = read.map((m) => (m.role === "user" ? { role: "system", content: m.content } : m));
      const before = i > 0 ? items[i - 1] : null;
      groups.push(withContentFields(read, content, isDict(before) && before.role !== "model"));
      calls = NO_CALLS;
    }
  } catch (error) {
    if (error === UNREAD) return null;
    throw error;
  }
  return groups;
}

// ---------------------------------------------------------------------------------------------- writing

function bridge(): Dict {
  return { role: "user", parts: [{ text: BRIDGE_TEXT }] };
}

/** A written part with the fields its reader kept: the part's own beside the data, the data object's in it. */
function partWithKept(item: Dict, kind: string, into: Kept | null): Dict {
  if (into === null) return item;
  const inner = into[kind];
  if (isDict(inner) && soleKey(inner) !== null) item[kind] = { ...(item[kind] as Dict), ...inner };
  const more = into.part;
  if (isDict(more)) Object.assign(item, more);
  return item;
}

function mediaPart(part: ImagePart | FilePart): Dict {
  if (part.data !== undefined) {
    return partWithKept({ inlineData: { mimeType: part.media_type, data: part.data } }, "inlineData", kept(part));
  }
  const mime = part.media_type || mediaTypeOf(part.url ?? "");
  const blob = mime ? { mimeType: mime, fileUri: part.url } : { fileUri: part.url };
  return partWithKept({ fileData: blob }, "fileData", kept(part));
}

function textOf(part: TextPart): Dict {
  return partWithKept({ text: part.text }, "text", kept(part));
}

function userParts(content: ChatMessage["content"]): Dict[] {
  if (content === undefined || typeof content === "string") return content ? [{ text: content }] : [];
  const out: Dict[] = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.provider_data !== undefined) out.push(textOf(part));
      else if (part.text) out.push({ text: part.text });
    } else if (part.type === "image" || part.type === "file") {
      out.push(mediaPart(part));
    } else if (part.type === "native") {
      out.push(part.data);
    } else if (part.text) {
      out.push({ text: part.text }); // (thinking in a user message is text)
    }
  }
  return out;
}

/** An assistant message's content parts, thought signatures on the part they came on (GE4). */
function modelParts(content: ChatMessage["content"]): Dict[] {
  if (content === undefined || typeof content === "string") return content ? [{ text: content }] : [];
  const out: Dict[] = [];
  let pending: string | undefined; // a signature that belongs on the next text or media part
  for (const part of content) {
    const signature = pending;
    pending = undefined;
    if (part.type === "thinking") {
      const own = part.provider === NAME && isBase64(part.signature) ? part.signature : undefined;
      if (part.text) {
        const thought: Dict = { text: part.text, thought: true };
        if (own !== undefined) thought.thoughtSignature = own;
        out.push(partWithKept(thought, "text", part.provider === NAME ? kept(part) : null));
      } else {
        pending = own;
      }
      continue;
    }
    if (part.type === "native") {
      out.push(part.data);
      continue;
    }
    let item: Dict;
    if (part.type === "image" || part.type === "file") item = mediaPart(part);
    else if (part.type === "text" && part.provider_data !== undefined) item = textOf(part);
    else if (part.type === "text" && (part.text || signature !== undefined)) item = { text: part.text };
    else continue;
    if (signature !== undefined) item.thoughtSignature = signature;
    out.push(item);
  }
  return out;
}

function opensTurn(message: ChatMessage): boolean {
  return Boolean(kept(message)?.turn);
}

/** A content opened by `message`, with the content's own fields its reader kept. */
function turnOf(role: string, parts: Dict[], message: ChatMessage | undefined): Dict {
  const turn: Dict = { role, parts };
  const fields = message === undefined ? undefined : kept(message)?.content;
  if (isDict(fields)) Object.assign(turn, fields);
  return turn;
}

function addCallParts(parts: Dict[], calls: readonly ToolCall[]): void {
  for (const call of calls) {
    const args = isDict(call.arguments) ? call.arguments : { [RAW_ARGUMENTS_KEY]: call.arguments ?? "" };
    const into = kept(call);
    const fc: Dict = into?.noId ? { name: call.name, args } : { id: call.id, name: call.name, args };
    const signature = into !== null && isBase64(into.thoughtSignature) ? into.thoughtSignature : undefined;
    const part: Dict = signature === undefined ? { functionCall: fc } : { functionCall: fc, thoughtSignature: signature };
    parts.push(partWithKept(part, "functionCall", into));
  }
}

/** A response's `response` as read, when the result's text is still that one's (undefined: it had none), else
 * `{"output": text}` (`{"error": text}`). */
function responseOf(result: ChatMessage, text: string, into: Kept | null): unknown {
  const isError = result.is_error === true;
  if (into !== null && "response" in into) {
    const original = into.response;
    const read = responseText(original);
    if (read !== null && read.text === text && read.isError === isError) return original ?? undefined;
  }
  return isError ? { error: text } : { output: text };
}

function addResponses(parts: Dict[], calls: readonly ToolCall[], messages: readonly ChatMessage[], first: number): void {
  const moved: Dict[] = [];
  calls.forEach((call, k) => {
    const result = messages[first + k] as ChatMessage;
    const content = result.content ?? "";
    let text: string;
    let inner: Part[] = [];
    if (typeof content === "string") text = content;
    else {
      text = content
        .filter((part) => (part.type === "text" || part.type === "thinking") && part.text)
        .map((part) => (part as TextPart).text)
        .join("\n");
      inner = content.filter((part) => part.type === "image" || part.type === "file" || part.type === "native");
    }
    const into = kept(result);
    const response: Dict = into?.noId || kept(call)?.noId ? { name: call.name } : { id: call.id, name: call.name };
    const said = responseOf(result, text, into);
    if (said !== undefined) response.response = said;
    const written = inner.map((part) => (part.type === "native" ? part.data : mediaPart(part as ImagePart | FilePart)));
    if (written.length > 0) {
      if (into?.inParts) response.parts = written;
      else moved.push({ text: `Images from tool result ${call.id}:` }, ...written);
    } else if (into?.inParts) {
      response.parts = [];
    }
    parts.push(partWithKept({ functionResponse: response }, "functionResponse", into));
  });
  parts.push(...moved);
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
        contents.push(turnOf("user", openUser, message));
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
        contents.push(turnOf("model", parts, message));
        origins.push(i - 1);
      }
      continue;
    }
    if ((contents[contents.length - 1] as Dict).role !== "user") {
      contents.push(bridge()); // GE2: a call turn follows a user or response turn
      origins.push(i - 1);
    }
    addCallParts(parts, calls);
    contents.push(turnOf("model", parts, message));
    origins.push(i - 1);
    openUser = [];
    addResponses(openUser, calls, messages, i);
    contents.push(turnOf("user", openUser, messages[i] ?? message));
    i += calls.length;
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
  let last: number | null = null; // the item kept last: an item of several messages goes in once
  while (p < out.length) {
    const run = runs[next];
    if (run === undefined || run.start !== p) {
      const r = whole[p] as number;
      if (r !== last) newItems.push(items[r]); // by position, not identity: a list may hold one object twice
      last = r;
      p += 1;
      continue;
    }
    next += 1;
    const written = writeRun(out.slice(run.lead, run.end), run.start - run.lead);
    for (const content of written) {
      rewritten.push(newItems.length);
      newItems.push(content);
    }
    last = null;
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
