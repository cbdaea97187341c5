/** The neutral model: chat messages as JSON objects (Python's `chatmend.messages`), checked as rule 9 says. */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type ProviderData = { [provider: string]: JsonValue };

export interface TextPart {
  type: "text";
  text: string;
  provider_data?: ProviderData;
}
export interface ImagePart {
  type: "image";
  media_type?: string;
  data?: string;
  url?: string;
  provider_data?: ProviderData;
}
export interface ThinkingPart {
  type: "thinking";
  text?: string;
  signature?: string;
  redacted?: boolean;
  data?: string;
  provider?: string;
  provider_data?: ProviderData;
}
export interface FilePart {
  type: "file";
  media_type?: string;
  data?: string;
  url?: string;
  file_id?: string;
  filename?: string;
  provider?: string;
  provider_data?: ProviderData;
}
export interface NativePart {
  type: "native";
  provider: string;
  data: { [key: string]: JsonValue };
}
export type Part = TextPart | ImagePart | ThinkingPart | FilePart | NativePart;

export interface ToolCall {
  /** The call's id, as the provider gave it (may be empty or repeated before repair). */
  id: string;
  name: string;
  /** A JSON object, or the raw text when it is not valid JSON (a stream cut off mid-call). */
  arguments?: { [key: string]: JsonValue } | string;
  raw_arguments?: string;
  provider_data?: ProviderData;
}

export type Role = "system" | "user" | "assistant" | "tool";

export interface ChatMessage {
  role: Role;
  content?: string | Part[];
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  tool_name?: string;
  is_error?: boolean;
  provider_data?: ProviderData;
}

/** Bad input: names the message (its index in the list) and the field. */
export class HistoryError extends Error {
  constructor(
    readonly reason: string,
    readonly index: number | null = null,
    readonly field: string | null = null,
  ) {
    const where = [index === null ? "" : `message ${index}`, field === null ? "" : `field ${field}`]
      .filter(Boolean)
      .join(", ");
    super(where ? `${where}: ${reason}` : reason);
    this.name = "HistoryError";
  }
}

const ROLES: readonly string[] = ["system", "user", "assistant", "tool"];
const MESSAGE_KEYS = ["role", "content", "tool_calls", "tool_call_id", "tool_name", "is_error", "provider_data"];
const CALL_KEYS = ["id", "name", "arguments", "raw_arguments", "provider_data"];
const TOOL_ONLY = ["tool_call_id", "tool_name"] as const;
/** Each part type's fields, and which of them are optional strings. */
const PART_KEYS: Record<string, readonly string[]> = {
  text: ["type", "text", "provider_data"],
  image: ["type", "media_type", "data", "url", "provider_data"],
  thinking: ["type", "text", "signature", "redacted", "data", "provider", "provider_data"],
  file: ["type", "media_type", "data", "url", "file_id", "filename", "provider", "provider_data"],
  native: ["type", "provider", "data"],
};
const OPTIONAL_STRINGS = new Set(["media_type", "data", "url", "signature", "provider", "file_id", "filename"]);
const CONTENT = "content is a string or a list of text, image, thinking, file and native parts";

/** True for a JSON object (not null, not an array). */
export function isDict(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON number as Python's `json.dumps` writes it: a fraction as `repr(float)` (the shortest digits, fixed from
 * 1e-4 on, below it in exponent form with two exponent digits at least: `1e-05` where JavaScript writes `0.00001`),
 * an integral number as Python's int and JavaScript's `JSON.stringify` write it (its digits, `1e+21` on: `JSON.parse`
 * keeps no difference between `1` and `1.0`, which Python writes `1.0`). */
export function pythonNumber(value: number): string {
  if (Number.isInteger(value) || Math.abs(value) >= 1e-4 || !Number.isFinite(value)) return String(value);
  const [digits, exponent] = value.toExponential().split("e") as [string, string];
  const power = Number(exponent);
  return `${digits}e${power < 0 ? "-" : "+"}${String(Math.abs(power)).padStart(2, "0")}`;
}

/** A string's length in code points, as Python counts it. */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

const TRUE_WORDS = new Set(["1", "on", "t", "true", "y", "yes"]);
const FALSE_WORDS = new Set(["0", "off", "f", "false", "n", "no"]);

/** A boolean as the Python model reads one (pydantic's lax mode: 0 and 1, "yes" and "no", ...); undefined when
 * it is none. */
export function laxBool(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value === "string") {
    const word = value.toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
  }
  return undefined;
}

// (a part's and a call's place, written only for an error)
const partAt = (k: number): string => `content.${k}`;
const callAt = (k: number): string => `tool_calls.${k}`;

function checkPart(part: unknown, index: number, k: number): void {
  if (!isDict(part)) throw new HistoryError(`expected a part object (${CONTENT})`, index, partAt(k));
  const type = part.type;
  const keys = typeof type === "string" ? PART_KEYS[type] : undefined;
  if (keys === undefined) throw new HistoryError(`unknown part type ${JSON.stringify(type)} (${CONTENT})`, index, partAt(k));
  for (const key in part) {
    if (!keys.includes(key)) throw new HistoryError("unknown field", index, `${partAt(k)}.${key}`);
  }
  for (const key of keys) {
    const value = part[key];
    if (type !== "native" && OPTIONAL_STRINGS.has(key)) {
      if (value !== undefined && value !== null && typeof value !== "string") {
        throw new HistoryError("expected a string or null", index, `${partAt(k)}.${key}`);
      }
    }
  }
  if (part.provider_data != null && !isDict(part.provider_data)) {
    throw new HistoryError("expected an object or null", index, `${partAt(k)}.provider_data`);
  }
  if (type === "text" && typeof part.text !== "string") throw new HistoryError("expected a string", index, `${partAt(k)}.text`);
  if (type === "thinking") {
    if (part.text !== undefined && typeof part.text !== "string") {
      throw new HistoryError("expected a string", index, `${partAt(k)}.text`);
    }
    if (part.redacted !== undefined && laxBool(part.redacted) === undefined) {
      throw new HistoryError("expected true or false", index, `${partAt(k)}.redacted`);
    }
  }
  if (type === "native") {
    if (typeof part.provider !== "string") throw new HistoryError("expected a string", index, `${partAt(k)}.provider`);
    if (!isDict(part.data)) throw new HistoryError("expected an object", index, `${partAt(k)}.data`);
  }
  if (type === "image" || type === "file") {
    const sources = ["data", "url", ...(type === "file" ? ["file_id"] : [])].filter((key) => part[key] != null);
    if (sources.length !== 1) {
      throw new HistoryError(`a ${type} needs exactly one of 'data' (base64), 'url'${type === "file" ? " or 'file_id'" : ""}`,
        index, partAt(k));
    }
    if (part.data != null && !part.media_type) {
      throw new HistoryError(`a ${type} with 'data' needs its 'media_type'`, index, `${partAt(k)}.media_type`);
    }
    if (type === "image" && typeof part.url === "string" && !part.url.trim()) {
      // (located at its part, as Python locates it)
      throw new HistoryError("an image's 'url' is empty; expected an https URL or a data: URI", index, partAt(k));
    }
  }
}

function checkCall(call: unknown, index: number, k: number): void {
  if (!isDict(call)) throw new HistoryError("expected a tool call object", index, callAt(k));
  for (const key in call) {
    if (!CALL_KEYS.includes(key)) throw new HistoryError("unknown field", index, `${callAt(k)}.${key}`);
  }
  if (call.id !== undefined && typeof call.id !== "string") throw new HistoryError("expected a string", index, `${callAt(k)}.id`);
  if (typeof call.name !== "string" || !call.name) {
    throw new HistoryError("expected a name of at least 1 character", index, `${callAt(k)}.name`);
  }
  const args = call.arguments;
  if (args !== undefined && typeof args !== "string" && !isDict(args)) {
    throw new HistoryError("expected an object or its JSON text", index, `${callAt(k)}.arguments`);
  }
  if (call.raw_arguments != null && typeof call.raw_arguments !== "string") {
    throw new HistoryError("expected a string or null", index, `${callAt(k)}.raw_arguments`);
  }
  if (call.provider_data != null && !isDict(call.provider_data)) {
    throw new HistoryError("expected an object or null", index, `${callAt(k)}.provider_data`);
  }
}

/** Rule 9: throws a HistoryError naming message `index` and the field when `item` is not a message of the model's
 * JSON shape (the same index and field the Python library names). */
export function checkMessage(item: unknown, index: number): asserts item is ChatMessage {
  if (!isDict(item)) {
    throw new HistoryError(`expected a message (a mapping with a 'role'), got ${typeName(item)}`, index);
  }
  const role = item.role;
  if (!("role" in item)) throw new HistoryError(`missing 'role'; expected one of ${ROLES.join(", ")}`, index, "role");
  if (typeof role !== "string" || !ROLES.includes(role)) {
    throw new HistoryError(`unknown role ${JSON.stringify(role)}; expected one of ${ROLES.join(", ")}`, index, "role");
  }
  // (keys walked with for-in and lists with a loop: this runs on every message repaired)
  for (const key in item) {
    if (!MESSAGE_KEYS.includes(key)) throw new HistoryError("unknown field", index, key);
  }
  const content = item.content;
  if (content !== undefined && typeof content !== "string") {
    if (!Array.isArray(content)) throw new HistoryError(CONTENT, index, "content");
    for (let k = 0; k < content.length; k++) checkPart(content[k], index, k);
  }
  const calls = item.tool_calls;
  if (calls !== undefined) {
    if (!Array.isArray(calls)) throw new HistoryError("expected a list of tool calls", index, "tool_calls");
    for (let k = 0; k < calls.length; k++) checkCall(calls[k], index, k);
    if (calls.length > 0 && role !== "assistant") {
      throw new HistoryError(`only assistant messages carry 'tool_calls', not ${role} messages`, index);
    }
  }
  if (item.tool_call_id != null && typeof item.tool_call_id !== "string") {
    throw new HistoryError("expected a string", index, "tool_call_id");
  }
  if (item.tool_name != null && typeof item.tool_name !== "string") {
    throw new HistoryError("expected a string or null", index, "tool_name");
  }
  const isError = item.is_error === undefined ? false : laxBool(item.is_error);
  if (isError === undefined) throw new HistoryError("expected true or false", index, "is_error");
  if (item.provider_data != null && !isDict(item.provider_data)) {
    throw new HistoryError("expected an object or null", index, "provider_data");
  }
  if (role === "tool") {
    if (item.tool_call_id == null) {
      throw new HistoryError("a tool message needs 'tool_call_id', the id of the call it answers", index);
    }
  } else {
    for (const name of TOOL_ONLY) {
      if (item[name] != null) throw new HistoryError(`only tool messages carry '${name}', not ${role} messages`, index);
    }
    if (isError) throw new HistoryError(`only tool messages carry 'is_error', not ${role} messages`, index);
  }
}

function typeName(value: unknown): string {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  return typeof value === "string" ? "str" : typeof value;
}

/** The characters Python's `str.isspace` takes as whitespace (rule 1 must agree with it byte for byte). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python counts the separators \x1c-\x1f as whitespace
const SPACE = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/;

/** True for a string that is empty or only whitespace. */
export function isBlank(text: string): boolean {
  return text.length === 0 || SPACE.test(text);
}

/** True for content that is empty or whitespace-only text (rule 1's test of an assistant message). */
export function saysNothing(content: string | readonly Part[] | undefined): boolean {
  if (content === undefined) return true;
  if (typeof content === "string") return isBlank(content);
  return content.every((part) => part.type === "text" && isBlank(part.text));
}

/** A message's canonical JSON shape (Python's `message_to_dict`): fixed key order, default-valued fields left out,
 * arguments given as the JSON text of an object parsed, every object inside arguments and provider data sorted. */
export function canonicalMessage(message: ChatMessage): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = { role: message.role };
  if (message.tool_call_id !== undefined && message.tool_call_id !== null) out.tool_call_id = message.tool_call_id;
  if (message.tool_name !== undefined && message.tool_name !== null) out.tool_name = message.tool_name;
  if (laxBool(message.is_error)) out.is_error = true;
  const content = message.content ?? "";
  out.content = typeof content === "string" ? content : content.map(canonicalPart);
  if (message.tool_calls && message.tool_calls.length > 0) out.tool_calls = message.tool_calls.map(canonicalCall);
  if (message.provider_data != null) out.provider_data = sortedJson(message.provider_data);
  return out;
}

function canonicalPart(part: Part): JsonValue {
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(part)) {
    if (value === null || value === undefined) continue;
    if (part.type === "thinking" && key === "redacted") {
      if (laxBool(value)) out.redacted = true; // (a boolean as the model reads it; false is the default, left out)
      continue;
    }
    if (part.type === "thinking" && key === "text" && value === "") continue; // (the default, left out)
    out[key] = sortedJson(value as JsonValue);
  }
  return out;
}

function canonicalCall(call: ToolCall): JsonValue {
  const out: Record<string, JsonValue> = { id: call.id ?? "", name: call.name, arguments: sortedJson(parsedArguments(call.arguments)) };
  if (call.raw_arguments != null) out.raw_arguments = call.raw_arguments;
  if (call.provider_data != null) out.provider_data = sortedJson(call.provider_data);
  return out;
}

/** Arguments as the model reads them: the JSON text of an object is that object; any other text stays verbatim. */
export function parsedArguments(args: ToolCall["arguments"]): JsonValue {
  if (args === undefined) return {};
  if (typeof args !== "string") return args;
  try {
    const parsed: unknown = JSON.parse(args);
    return isDict(parsed) && strictJson(parsed) ? (parsed as JsonValue) : args;
  } catch {
    return args;
  }
}

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True for JSON Python's strict reader takes too: every number finite (`1e999` is not), no lone surrogate. */
function strictJson(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value === "string") return !LONE.test(value);
  if (Array.isArray(value)) return value.every(strictJson);
  if (isDict(value)) return Object.entries(value).every(([key, inner]) => !LONE.test(key) && strictJson(inner));
  return true;
}

/** A JSON value with every object's keys sorted (equal values give equal `JSON.stringify` bytes). */
export function sortedJson(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortedJson);
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value).sort()) out[key] = sortedJson(value[key] as JsonValue);
    return out;
  }
  return value;
}
