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
const PART_TYPES: readonly string[] = ["text", "image", "thinking", "file", "native"];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Rule 9: throws a HistoryError naming message `index` and the field when `item` is not a message. */
export function checkMessage(item: unknown, index: number): asserts item is ChatMessage {
  if (!isObject(item)) {
    throw new HistoryError(`expected a message (a mapping with a 'role'), got ${typeName(item)}`, index);
  }
  const role = item.role;
  if (!("role" in item)) throw new HistoryError(`missing 'role'; expected one of ${ROLES.join(", ")}`, index, "role");
  if (typeof role !== "string" || !ROLES.includes(role)) {
    throw new HistoryError(`unknown role ${JSON.stringify(role)}; expected one of ${ROLES.join(", ")}`, index, "role");
  }
  const content = item.content;
  if (content !== undefined && typeof content !== "string") {
    if (!Array.isArray(content)) {
      throw new HistoryError("content is a string or a list of text, image, thinking, file and native parts", index,
        "content");
    }
    content.forEach((part, k) => {
      if (!isObject(part) || typeof part.type !== "string" || !PART_TYPES.includes(part.type)) {
        throw new HistoryError("expected a text, image, thinking, file or native part", index, `content.${k}`);
      }
    });
  }
  const calls = item.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw new HistoryError("expected a list of tool calls", index, "tool_calls");
    if (calls.length > 0 && role !== "assistant") {
      throw new HistoryError(`only assistant messages carry 'tool_calls', not ${role} messages`, index);
    }
    calls.forEach((call, k) => {
      if (!isObject(call)) throw new HistoryError("expected a tool call", index, `tool_calls.${k}`);
      if (typeof call.name !== "string" || !call.name) {
        throw new HistoryError("expected a name of at least 1 character", index, `tool_calls.${k}.name`);
      }
      if (call.id !== undefined && typeof call.id !== "string") {
        throw new HistoryError("expected a string", index, `tool_calls.${k}.id`);
      }
      const args = call.arguments;
      if (args !== undefined && typeof args !== "string" && !isObject(args)) {
        throw new HistoryError("expected an object or its JSON text", index, `tool_calls.${k}.arguments`);
      }
    });
  }
  if (role === "tool") {
    if (item.tool_call_id === undefined || item.tool_call_id === null) {
      throw new HistoryError("a tool message needs 'tool_call_id', the id of the call it answers", index);
    }
    if (typeof item.tool_call_id !== "string") throw new HistoryError("expected a string", index, "tool_call_id");
    if (item.tool_name != null && typeof item.tool_name !== "string") {
      throw new HistoryError("expected a string or null", index, "tool_name");
    }
    if (item.is_error !== undefined && typeof item.is_error !== "boolean") {
      throw new HistoryError("expected true or false", index, "is_error");
    }
  } else {
    for (const name of ["tool_call_id", "tool_name"] as const) {
      if (item[name] !== undefined && item[name] !== null) {
        throw new HistoryError(`only tool messages carry '${name}', not ${role} messages`, index);
      }
    }
    if (item.is_error !== undefined && item.is_error !== false) {
      throw new HistoryError(`only tool messages carry 'is_error', not ${role} messages`, index);
    }
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
  if (message.is_error) out.is_error = true;
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
    if (part.type === "thinking" && ((key === "text" && value === "") || (key === "redacted" && value === false))) {
      continue; // (defaults left out)
    }
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
    return isObject(parsed) ? (parsed as JsonValue) : args;
  } catch {
    return args;
  }
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
