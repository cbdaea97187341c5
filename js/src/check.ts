/**
 * `check(provider, body)`: the 400s the provider would answer a body with, predicted offline, in its own words (the
 * port of the Python adapters' checkers, docs/rules.md). It judges the bodies whose conversation list the adapter's
 * stubs take (each provider's whole vocabulary), or Gemini's neutral reader; any other body throws
 * `UnsupportedBodyError` (Gemini's checker, ported whole, judges a body of any shape, as Python's does).
 */

import { field, isBase64, snakeCase } from "./gemini.js";
import { codePoints, isBlank, isDict, pythonNumber } from "./messages.js";
import {
  answeredId,
  CALL_OUTPUTS,
  INPUT_SIDE,
  isClientCall,
  isClientOutput,
  OUTPUT_CALLS,
  type ProviderName,
  readable,
  UnsupportedBodyError,
} from "./providers.js";

export interface Problem {
  /** The rule's id in docs/rules.md, e.g. `AN1`. */
  code: string;
  /** Where in the body, e.g. `messages[3].content[0]`. */
  path: string;
  /** The provider's own wording of the error. */
  message: string;
  provider: ProviderName;
}

type Dict = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: wire items are any JSON the provider takes
type Item = any;


export function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return !value.isWellFormed();
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) {
    for (const inner of value) if (holdsLoneSurrogate(inner)) return true;
    return false;
  }
  for (const key in value) {
    if (!key.isWellFormed() || holdsLoneSurrogate((value as Dict)[key])) return true;
  }
  return false;
}

/** The problems `provider` would answer `body` with (empty when none). `options` tell Gemini's checker the model
 * the body goes to (default: the body's own `model`) and the platform (`"vertex"`). A Gemini body of any shape is
 * judged, as Python judges it; another provider's body whose list the stubs do not take is refused. */
export function check(provider: ProviderName, body: Record<string, unknown>, options: CheckOptions = {}): Problem[] {
  const checker = CHECKERS[provider];
  if (checker === undefined) throw new TypeError(`check knows no provider ${JSON.stringify(provider)} yet`);
  const items = body?.[LIST_KEYS[provider]];
  // (a Chat body whose messages are malformed is judged by their shapes alone, as Python judges it)
  const shaped = provider === "openai_chat" && Array.isArray(items) && chatShapeProblems(items).length > 0;
  if (provider !== "gemini" && !shaped && (!Array.isArray(items) || (items.length > 0 && !readable(provider, body)))) {
    throw new UnsupportedBodyError(provider, "a body whose list the stubs do not take");
  }
  const problems = listedProblems(provider, body, options);
  if (holdsLoneSurrogate(body)) problems.push(...surrogateProblems(provider, body));
  return problems;
}

// ------------------------------------------------------------------------------------ lone surrogates (JSON)

/** One half of a surrogate pair with no other half beside it (`_json.LONE_HALF`). */
const LONE_HALF = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const LONE_WORDS = {
  high: "The request body is not valid JSON: a lone high surrogate ({escape}) with no low surrogate after it, in the string at {path}",
  low: "The request body is not valid JSON: a lone low surrogate ({escape}) with no high surrogate before it, in the string at {path}",
};
/** Anthropic's words, where its parser stops in the body sent compact on one line. */
const ANTHROPIC_LONE_WORDS = {
  high: "The request body is not valid JSON: no low surrogate in string: line 1 column {column} (char {char})",
  low: "The request body is not valid JSON: invalid high surrogate in string: line 1 column {column} (char {char})",
};

interface Lone {
  path: string;
  half: string;
}

/** `JSON`: every string (value or key) holding a lone surrogate, in document order, in the provider's words
 * (`Provider._surrogate_problems`). */
function surrogateProblems(provider: ProviderName, body: unknown): Problem[] {
  const found: Lone[] = [];
  loneSurrogates(body, "", found);
  const stops = provider === "anthropic" ? parserStops(body, found.length) : null;
  return found.map(({ path, half }, k) => {
    const high = half < "\uDC00";
    const words = stops === null ? LONE_WORDS : ANTHROPIC_LONE_WORDS;
    const char = stops?.[k] ?? 0;
    const fields: Record<string, string> = {
      escape: `\\u${half.charCodeAt(0).toString(16).padStart(4, "0")}`,
      path,
      column: String(char + 1),
      char: String(char),
    };
    const message = (high ? words.high : words.low).replace(/\{(\w+)\}/g, (_, name: string) => fields[name] as string);
    return { code: "JSON", path, message, provider };
  });
}

/** The paths of the strings (values or keys) of `value` that hold a lone surrogate, in document order (Python's
 * `find_lone_surrogates`, whose paths `BodyRepair.mended` lists). */
export function lonePaths(value: unknown): string[] {
  const found: Lone[] = [];
  loneSurrogates(value, "", found);
  return found.map((lone) => lone.path);
}

/** `_json.find_lone_surrogates`: the first lone half of each string, a dict's keys before its values. */
function loneSurrogates(value: unknown, path: string, out: Lone[]): void {
  if (typeof value === "string") {
    const match = LONE_HALF.exec(value);
    if (match !== null) out.push({ path, half: match[0] });
  } else if (Array.isArray(value)) {
    for (let k = 0; k < value.length; k++) loneSurrogates(value[k], `${path}[${k}]`, out);
  } else if (isDict(value)) {
    for (const key in value) {
      const match = LONE_HALF.exec(key);
      if (match !== null) out.push({ path: `${path || "(top)"} key ${pyRepr(key)}`, half: match[0] });
    }
    for (const key in value) loneSurrogates(value[key], path ? `${path}.${key}` : key, out);
  }
}

/** What Python's `str.isprintable` calls not printable: other (control, format, surrogate, private, unassigned) and
 * separators but the space, one code point at a time. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's `repr` of a key holding a lone surrogate: its quotes, the escapes of `\\`, the quote, `\\t`, `\\n`,
 * `\\r`, and of each code point `str.isprintable` refuses (`\\xNN`, `\\uNNNN`, `\\UNNNNNNNN`), the others as they are. */
function pyRepr(key: string): string {
  const quote = key.includes("'") && !key.includes('"') ? '"' : "'";
  let body = "";
  for (const c of key) {
    const code = c.codePointAt(0) as number;
    if (c === "\\" || c === quote) body += `\\${c}`;
    else if (c === "\t") body += "\\t";
    else if (c === "\n") body += "\\n";
    else if (c === "\r") body += "\\r";
    else if (c === " " || !NOT_PRINTABLE.test(c)) body += c;
    else if (code < 0x100) body += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code < 0x10000) body += `\\u${code.toString(16).padStart(4, "0")}`;
    else body += `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return `${quote}${body}${quote}`;
}

/** `base._parser_stops`: where a parser reading the body sent compact (Python's `json.dumps`, a lone half written
 * as its escape) stops at each lone half, in code points; null when their count is not `count`. */
function parserStops(body: unknown, count: number): number[] | null {
  const text = pyCompact(body);
  const stops: number[] = [];
  let points = 0;
  let at = 0;
  const halves = new RegExp(LONE_HALF.source, "g");
  for (let match = halves.exec(text); match !== null; match = halves.exec(text)) {
    points += codePoints(text.slice(at, match.index));
    at = match.index;
    stops.push(points + 5 * stops.length + 6);
  }
  return stops.length === count ? stops : null;
}

/** `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`: a lone half written as it is. */
function pyCompact(value: unknown): string {
  if (typeof value === "string") return pyCompactString(value);
  if (typeof value === "number") return pythonNumber(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(pyCompact).join(",")}]`;
  const entries: string[] = [];
  for (const key in value as Dict) entries.push(`${pyCompactString(key)}:${pyCompact((value as Dict)[key])}`);
  return `{${entries.join(",")}}`;
}

const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

function pyCompactString(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON escapes the control characters
  const escaped = text.replace(/["\\\u0000-\u001f]/g, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `"${escaped}"`;
}

/** `body`'s problems, for a body whose list the package reads and whose strings all encode (`repairBody`'s own
 * lists: it refuses the others first). */
export function listedProblems(provider: ProviderName, body: Record<string, unknown>, options: CheckOptions = {}): Problem[] {
  const problems: Problem[] = [];
  walkProblems(provider, body, options, false, (problem) => {
    problems.push(problem);
  });
  return problems;
}

/** Thrown by `listHoldsProblem`'s sink to end the walk at the first problem of the list. */
const FOUND = Symbol("a problem of the list");

/** True when `body` (as `listedProblems` takes it) holds a problem in its list, not in its other fields: the
 * checker's walk ends at the first. */
export function listHoldsProblem(provider: ProviderName, body: Record<string, unknown>): boolean {
  const key = LIST_KEYS[provider];
  try {
    walkProblems(provider, body, {}, true, ({ path }) => {
      if (path === key || path.startsWith(`${key}[`) || path.startsWith(`${key}.`)) throw FOUND;
    });
  } catch (error) {
    if (error === FOUND) return true;
    throw error;
  }
  return false;
}

const LIST_KEYS: Readonly<Record<ProviderName, string>> = {
  anthropic: "messages",
  openai_chat: "messages",
  openai_responses: "input",
  gemini: "contents",
};

/** Each problem of `body`, handed to `report` as it is found (in the provider's order unless `anyOrder`). */
function walkProblems(
  provider: ProviderName,
  body: Record<string, unknown>,
  options: CheckOptions,
  anyOrder: boolean,
  report: Report,
): void {
  const key = LIST_KEYS[provider];
  const items = body[key] as Item[];
  const empty = EMPTY_LIST[provider];
  if (Array.isArray(items) && items.length === 0 && empty !== undefined) {
    report({ code: "EMPTY", path: key, message: empty, provider });
  }
  (CHECKERS[provider] as Checker)(body, items, report, options, anyOrder);
}

const EMPTY_LIST: Partial<Record<ProviderName, string>> = {
  openai_chat:
    "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
  anthropic: "messages: messages must have at least one element",
};

type Report = (problem: Problem) => void;
/** A provider's checker: each problem of the body handed to `report`, in the provider's order (with `anyOrder`,
 * in any order: the caller asks only whether there is one). */
type Checker = (body: Dict, items: Item[], report: Report, options: CheckOptions, anyOrder: boolean) => void;

// ------------------------------------------------------------------------------------------- OpenAI Chat

const OC = {
  OC1: (ids: string) =>
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
    `'tool_call_id'. The following tool_call_ids did not have response messages: ${ids}`,
  OC2: () => "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
  OC3: (id: string) => `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`,
  OC4: (id: string, first: string, second: string) =>
    `Invalid parameter: Duplicate value for 'tool_call_id' of '${id}', in ${first} and ${second}.`,
  OC5: (where: string, limit: number, length: number) =>
    `Invalid '${where}': string too long. Expected a string with maximum length ${limit}, but got a string with ` +
    `length ${length} instead.`,
  OC7: (index: number, role: string) =>
    `Invalid 'messages[${index}]'. Image URLs are only allowed for messages with role 'user', but this message with ` +
    `role '${role}' contains an image URL.`,
};

/** Python's `brief`: a value as an error message shows it (a string or a number as its repr, cut short; a list or an
 * object by its kind). */
function brief(value: unknown): string {
  if (Array.isArray(value)) return "<a list>";
  if (isDict(value)) return "<an object>";
  const shown = typeof value === "string" ? pyRepr(value) : typeof value === "number" ? pythonNumber(value) :
    typeof value === "boolean" ? (value ? "True" : "False") : "None";
  const points = [...shown];
  return points.length <= 80 ? shown : `${points.slice(0, 76).join("")}...${points[points.length - 1]}`;
}

const CHAT_ROLES: readonly unknown[] = ["system", "developer", "user", "assistant", "tool", "function"];
const EMPTY_IMAGE_URL =
  "Invalid image URL: expected an https URL or a base64-encoded data URL with an image MIME type " +
  "(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an empty string";
const UNKNOWN_PART =
  "Invalid value: ''. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.";
const UNNAMED_CALL = "a tool call needs a 'function' object with a non-empty string 'name'";

/** What is malformed in one Chat content part (the field's path below the part, and why), or null (`_part_problem`:
 * a part of a type not known here is left to the provider). */
export function chatPartProblem(part: unknown): [string, string] | null {
  if (!isDict(part) || typeof part.type !== "string") return ["", "expected a content part object"];
  const kind = part.type;
  if (kind === "") return [".type", UNKNOWN_PART];
  if ((kind === "text" || kind === "refusal") && typeof part[kind] !== "string") return [`.${kind}`, `a '${kind}' part needs a string '${kind}'`];
  if (kind === "image_url") {
    const image = part.image_url;
    if (!isDict(image) || typeof image.url !== "string") return [".image_url", "an 'image_url' part needs an 'image_url' object with a string 'url'"];
    if (image.url === "") return [".image_url.url", EMPTY_IMAGE_URL];
  }
  return null;
}

/** What is malformed in one tool call, or null (`wire.call_problem`: a call of a type not known here is left to the
 * provider). */
function chatCallProblem(call: unknown): [string, string] | null {
  if (!isDict(call)) return ["", UNNAMED_CALL];
  const kind = "type" in call ? call.type : "function";
  if (typeof kind !== "string" || kind === "") return [".type", "a tool call's 'type' must be a non-empty string"];
  const fn = call.function;
  if (kind === "function" && !(isDict(fn) && typeof fn.name === "string" && fn.name !== "")) return ["", UNNAMED_CALL];
  const custom = call.custom;
  if (kind === "custom" && !(isDict(custom) && typeof custom.name === "string" && custom.name !== "" && typeof custom.input === "string")) {
    return [".custom", "a custom tool call needs a 'custom' object with a non-empty 'name' and a string 'input'"];
  }
  return null;
}

/** The structural problems of one Chat message, before any rule can be judged (`_check_shape`). */
function chatShape(message: unknown, path: string): Problem[] {
  const shape = (where: string, text: string): Problem => ({ code: "SHAPE", path: where, message: text, provider: "openai_chat" });
  if (!isDict(message)) return [shape(path, "expected a message object")];
  const role = message.role;
  if (!CHAT_ROLES.includes(role)) return [shape(`${path}.role`, `unknown role ${brief(role)}`)];
  if (role === "function" && !(typeof message.name === "string" && message.name !== "")) {
    return [shape(`${path}.name`, "a function message needs a string 'name'")];
  }
  const out: Problem[] = [];
  const content = message.content;
  if (content !== undefined && content !== null && typeof content !== "string" && !Array.isArray(content)) {
    out.push(shape(`${path}.content`, "content must be a string, a list or null"));
  }
  if (Array.isArray(content)) {
    content.forEach((part, j) => {
      const problem = chatPartProblem(part);
      if (problem !== null) out.push(shape(`${path}.content[${j}]${problem[0]}`, problem[1]));
    });
  }
  if (role === "tool" && "tool_call_id" in message && typeof message.tool_call_id !== "string") {
    out.push(shape(`${path}.tool_call_id`, "'tool_call_id' must be a string"));
  }
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (role !== "assistant" || !Array.isArray(calls)) return [...out, shape(`${path}.tool_calls`, "'tool_calls' is a list on assistant messages")];
    calls.forEach((call, k) => {
      const problem = chatCallProblem(call);
      if (problem !== null) out.push(shape(`${path}.tool_calls[${k}]${problem[0]}`, problem[1]));
      else if ("id" in call && typeof call.id !== "string") out.push(shape(`${path}.tool_calls[${k}].id`, "'id' must be a string"));
    });
  }
  const legacy = message.function_call;
  if (legacy !== undefined && legacy !== null && (role !== "assistant" || !isDict(legacy) ||
      !(typeof legacy.name === "string" && legacy.name !== "" && typeof legacy.arguments === "string"))) {
    out.push(shape(`${path}.function_call`, "'function_call' is an object with a non-empty 'name' and string 'arguments', on assistant messages"));
  }
  return out;
}

/** Every structural problem of a Chat message list (when there is one, Python's checker judges no rule). */
function chatShapeProblems(messages: Item[]): Problem[] {
  const out: Problem[] = [];
  for (let i = 0; i < messages.length; i++) out.push(...chatShape(messages[i], `messages[${i}]`));
  return out;
}

function checkChat(_body: Dict, messages: Item[], report: Report): void {
  const shapes = chatShapeProblems(messages);
  if (shapes.length > 0) {
    for (const problem of shapes) report(problem);
    return;
  }
  const say = (code: string, path: string, message: string) => report({ code, path, message, provider: "openai_chat" });
  let pending = new Map<string, number>();
  let answered = new Map<string, number>();
  let callsAt = -1;
  const unanswered = () => say("OC1", `messages[${callsAt}].role`, OC.OC1([...pending.keys()].join(", ")));
  // OC7: image parts only in user messages (one problem per message, as the API reports it)
  const images = (message: Dict, i: number) => {
    const content = message.content;
    if (message.role === "user" || !Array.isArray(content)) return;
    const j = content.findIndex((part) => isDict(part) && part.type === "image_url");
    if (j >= 0) say("OC7", `messages[${i}].content[${j}]`, OC.OC7(i, message.role as string));
  };
  messages.forEach((message: Dict, i: number) => {
    const path = `messages[${i}]`;
    if (message.role === "tool") {
      const callId = (message.tool_call_id ?? "") as string;
      if (callsAt < 0) say("OC2", `${path}.role`, OC.OC2());
      else if (answered.has(callId)) {
        say("OC4", `${path}.tool_call_id`, OC.OC4(callId, `messages[${answered.get(callId)}]`, path));
      } else if (!pending.has(callId)) say("OC3", `${path}.tool_call_id`, OC.OC3(callId));
      else {
        pending.delete(callId);
        answered.set(callId, i);
      }
      images(message, i);
      return;
    }
    if (pending.size > 0) unanswered();
    pending = new Map();
    answered = new Map();
    callsAt = -1;
    const calls = message.tool_calls as Dict[] | undefined | null;
    if (message.role === "assistant" && calls && calls.length > 0) {
      callsAt = i;
      calls.forEach((call, k) => {
        const callId = (call.id ?? "") as string;
        const here = `${path}.tool_calls[${k}]`;
        if (pending.has(callId)) {
          say("OC4", `${here}.id`, OC.OC4(callId, `${path}.tool_calls[${pending.get(callId)}]`, here));
        }
        if (!pending.has(callId)) pending.set(callId, k);
        if (codePoints(callId) > 40) say("OC5", `${here}.id`, OC.OC5(`${here}.id`, 40, codePoints(callId)));
      });
    }
    images(message, i);
  });
  if (pending.size > 0) unanswered();
}

// ------------------------------------------------------------------------------------- Anthropic Messages

const AN = {
  AN1: (n: number, ids: string) =>
    `messages.${n}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids}. ` +
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
  AN2: (n: number, m: number, id: string) =>
    `messages.${n}.content.${m}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
  AN3: (n: number, count: number) =>
    `messages.${n}: Did not find ${count} \`tool_result\` block(s) at the beginning of this message. ` +
    "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
  AN5: (n: number, m: number) => `messages.${n}.content.${m}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`,
  AN6: (n: number, m: number) => `messages.${n}.content.${m}: \`tool_use\` ids must be unique`,
  AN7: (n: number, m: number, id: string) =>
    `messages.${n}.content.${m}: each tool_use must have a single result. Found multiple \`tool_result\` ` +
    `blocks with id: ${id}`,
  AN8: (n: number) => `tools.${n}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`,
  AN8u: () => "tools: Tool names must be unique.",
  AN9: (n: number) =>
    `messages.${n}: all messages must have non-empty content except for the optional final assistant message`,
  AN9e: () => "messages: text content blocks must be non-empty",
  AT1: (n: number, found: string) =>
    `messages.${n}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. ` +
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block " +
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include " +
    "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please " +
    "consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
  AT2: (n: number, found: string) =>
    `messages.${n}.content.0: If an assistant message contains any thinking blocks, the first block ` +
    `must be thinking or redacted_thinking. Found ${found}.`,
  AT4: (n: number, m: number) => `messages.${n}.content.${m}.thinking.signature: Field required`,
  AT6: (n: number) =>
    `messages.${n}.content.0: When thinking is disabled, an \`assistant\` message in the final position ` +
    "cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
  AT7: (n: number, kind: string) => `messages.${n}: The final block in an assistant message cannot be \`${kind}\`.`,
  AN9w: () => "messages: text content blocks must contain non-whitespace text",
};

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const THINKING: readonly unknown[] = ["thinking", "redacted_thinking"];
const IN_USER_ONLY: readonly unknown[] = ["image", "document", "tool_result", "search_result"];
const MEDIA_TYPES: readonly unknown[] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

interface Turn {
  role: string;
  first: number;
  last: number;
  /** [message index, block index or -1 for string content, block] */
  blocks: [number, number, Dict][];
}

function where(n: number, m: number): string {
  return m < 0 ? `messages[${n}].content` : `messages[${n}].content[${m}]`;
}

function checkAnthropic(body: Dict, messages: Item[], report: Report): void {
  const add = (code: string, path: string, message: string) => report({ code, path, message, provider: "anthropic" });

  const text = (block: Dict, path: string) => {
    const value = block.text;
    if (typeof value !== "string") add("SHAPE", path, `${path}.text: Input should be a valid string`);
    else if (!value) add("AN9", path, AN.AN9e());
    else if (isBlank(value)) add("AN9", path, AN.AN9w());
  };
  const image = (block: Dict, path: string) => {
    const source = block.source;
    const kind = isDict(source) ? source.type : undefined;
    if (kind === "base64" && isDict(source)) {
      if (typeof source.media_type !== "string" || !MEDIA_TYPES.includes(source.media_type)) {
        add("SHAPE", `${path}.source.media_type`, `${path}.source.base64.media_type: Input should be 'image/jpeg', ` +
          "'image/png', 'image/gif' or 'image/webp'");
      }
      if (typeof source.data !== "string") add("SHAPE", `${path}.source.data`, `${path}.source.base64.data: Field required`);
    } else if (kind === "url" && isDict(source)) {
      if (typeof source.url !== "string") add("SHAPE", `${path}.source.url`, `${path}.source.url.url: Field required`);
      else if (!source.url) {
        add("SHAPE", `${path}.source.url`, `${path}.source.url.url: Input should be a valid URL, input is empty`);
      }
    } else if (kind !== "file") {
      add("SHAPE", `${path}.source`, `${path}.source: expected a base64, url or file image source`);
    }
  };

  // model, max_tokens, system and tools
  if (typeof body.model !== "string" && !("anthropic_version" in body)) add("SHAPE", "model", "model: Field required");
  const maxTokens = body.max_tokens;
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 0) {
    add("SHAPE", "max_tokens", "max_tokens: Field required (a non-negative integer)");
  }
  const system = body.system;
  if (Array.isArray(system)) {
    system.forEach((block, j) => {
      const path = `system[${j}]`;
      if (!isDict(block) || block.type !== "text") {
        const kind = isDict(block) ? block.type : Array.isArray(block) ? "list" : block === null ? "NoneType" : typeof block;
        add("SHAPE", path, `system.${j}: the system prompt takes text blocks only, not ${brief(kind)}`);
      } else {
        text(block, path);
      }
    });
  } else if (system !== undefined && system !== null && typeof system !== "string") {
    add("SHAPE", "system", "system: Input should be a valid string or a list of text blocks");
  }
  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) add("SHAPE", "tools", "tools: Input should be a valid list");
    else {
      const names = new Set<string>();
      tools.forEach((tool, k) => {
        if (!isDict(tool)) {
          add("SHAPE", `tools[${k}]`, `tools.${k}: Input should be a valid dictionary`);
          return;
        }
        const custom = tool.type === undefined || tool.type === null || tool.type === "custom";
        if ((tool.name === undefined || tool.name === null) && !custom) return; // a toolset names no tool
        if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) add("AN8", `tools[${k}].name`, AN.AN8(k));
        else if (names.has(tool.name)) add("AN8", `tools[${k}].name`, AN.AN8u());
        else names.add(tool.name);
        if (custom && !isDict(tool.input_schema)) {
          add("SHAPE", `tools[${k}].input_schema`, `tools.${k}.custom.input_schema: Field required`);
        }
      });
    }
  }

  // messages merged into turns (AN9 on the way)
  const turns: Turn[] = [];
  let lastAssistant = -1;
  messages.forEach((m: Dict, n: number) => {
    if (m.role === "assistant") lastAssistant = n;
  });
  messages.forEach((message: Dict, n: number) => {
    const { role, content } = message as { role: string; content: string | Dict[] };
    if (content.length === 0 && !(role === "assistant" && n === lastAssistant && n === messages.length - 1)) {
      add("AN9", `messages[${n}]`, AN.AN9(n));
    }
    let turn = turns[turns.length - 1];
    if (turn !== undefined && turn.role === role) turn.last = n;
    else {
      turn = { role, first: n, last: n, blocks: [] };
      turns.push(turn);
    }
    if (typeof content === "string") {
      if (content) turn.blocks.push([n, -1, { type: "text", text: content }]);
      return;
    }
    content.forEach((block, m) => {
      (turn as Turn).blocks.push([n, m, block]);
    });
  });

  turns.forEach((turn, t) => {
    if (turn.role === "assistant") {
      // AN4, AN5, AN6 (within the merged turn only)
      const seen = new Set<string>();
      let afterUse = false;
      let hasThinking = false;
      for (const [n, m, block] of turn.blocks) {
        const path = where(n, m);
        if (block.type === "tool_use") {
          afterUse = true;
          const callId = block.id as string;
          if (!TOOL_ID.test(callId)) add("AN5", `${path}.id`, AN.AN5(n, m));
          else if (seen.has(callId)) add("AN6", path, AN.AN6(n, m));
          else seen.add(callId);
          continue;
        }
        if (afterUse) {
          const ids = turn.blocks.filter(([, , b]) => b.type === "tool_use").map(([, , b]) => String(b.id));
          add("AN4", path, AN.AN1(turn.last + 1, ids.join(", ")));
        }
        if (block.type === "text") text(block, path);
        else if (block.type === "thinking") {
          hasThinking = true;
          if (typeof block.signature !== "string") add("AT4", path, AN.AT4(n, m));
          if (typeof block.thinking !== "string") {
            add("SHAPE", path, `messages.${n}.content.${m}.thinking.thinking: Field required`);
          }
        } else if (block.type === "redacted_thinking") {
          hasThinking = true;
          if (typeof block.data !== "string") {
            add("SHAPE", path, `messages.${n}.content.${m}.redacted_thinking.data: Field required`);
          }
        } else if (IN_USER_ONLY.includes(block.type)) {
          add("SHAPE", path, `messages.${n}.content.${m}: \`${block.type}\` blocks are not allowed in an \`assistant\` message`);
        }
      }
      const first = turn.blocks[0];
      const last = turn.blocks[turn.blocks.length - 1];
      if (hasThinking && first !== undefined && !THINKING.includes(first[2].type)) {
        add("AT2", where(turn.first, 0), AN.AT2(turn.first, first[2].type as string));
      }
      if (last !== undefined && THINKING.includes(last[2].type)) {
        add("AT7", where(last[0], last[1]), AN.AT7(last[0], last[2].type as string));
      }
      // AN1: every tool_use of the turn has its tool_result in the next turn
      const uses = turn.blocks.filter(([, , b]) => b.type === "tool_use").map(([, , b]) => b.id as string);
      if (uses.length > 0) {
        const following = turns[t + 1];
        const results = new Set<string>();
        if (following !== undefined && following.role === "user") {
          for (const [, , b] of following.blocks) if (b.type === "tool_result") results.add(b.tool_use_id as string);
        }
        const missing = uses.filter((u) => !results.has(u));
        if (missing.length > 0) {
          const n = following !== undefined ? following.first : turn.last;
          add("AN1", `messages[${n}]`, AN.AN1(n, missing.join(", ")));
        }
      }
      return;
    }
    // a user turn: AN2, AN3, AN7 and its blocks
    const previous = t > 0 && turns[t - 1]?.role === "assistant" ? (turns[t - 1] as Turn) : null;
    const uses = new Set<string>();
    let count = 0;
    for (const [, , b] of previous?.blocks ?? []) {
      if (b.type === "tool_use") uses.add(b.id as string);
    }
    count = uses.size;
    const answered = new Set<string>();
    let leading = true;
    for (const [n, m, block] of turn.blocks) {
      const path = where(n, m);
      if (block.type !== "tool_result") {
        leading = false;
        if (block.type === "text") text(block, path);
        else if (block.type === "image") image(block, path);
        else if (block.type === "tool_use" || THINKING.includes(block.type)) {
          add("SHAPE", path, `messages.${n}.content.${m}: \`${block.type}\` blocks are not allowed in a \`user\` message`);
        }
        continue;
      }
      const useId = block.tool_use_id as string;
      if (!uses.has(useId)) add("AN2", path, AN.AN2(n, m, useId));
      else if (answered.has(useId)) add("AN7", path, AN.AN7(n, m, useId));
      else if (!leading) add("AN3", path, AN.AN3(turn.first, count));
      answered.add(useId);
      if ("is_error" in block && typeof block.is_error !== "boolean") {
        add("SHAPE", `${path}.is_error`, `${path}.is_error: Input should be a valid boolean`);
      }
      const content = block.content;
      if (Array.isArray(content)) {
        content.forEach((inner: Dict, k: number) => {
          const at = `${path}.content[${k}]`;
          if (inner.type === "text") text(inner, at);
          else if (inner.type === "image") image(inner, at);
        });
      }
    }
  });
  // AT1 (thinking on: the last tool-use turn opens with thinking) and AT6 (off: no final thinking)
  const assistants = turns.filter((turn) => turn.role === "assistant" && turn.blocks.length > 0);
  const last = assistants[assistants.length - 1];
  if (last !== undefined) {
    const firstKind = (last.blocks[0] as [number, number, Dict])[2].type as string;
    const thinking = body.thinking;
    if (isDict(thinking) && (thinking.type === "enabled" || thinking.type === "adaptive")) {
      if (last.blocks.some(([, , b]) => b.type === "tool_use") && !THINKING.includes(firstKind)) {
        add("AT1", `${where(last.first, 0)}.type`, AN.AT1(last.first, firstKind));
      }
    } else if (turns[turns.length - 1] === last && last.blocks.some(([, , b]) => THINKING.includes(b.type))) {
      add("AT6", where(last.first, 0), AN.AT6(last.first));
    }
  }
}

// ------------------------------------------------------------------------------------- OpenAI Responses

/** A JSON value's type as OpenAI's errors name it. */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return "a boolean";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a decimal";
  return Array.isArray(value) ? "an array" : "an object";
}

function checkResponses(body: Dict, items: Item[], report: Report, _options: CheckOptions, anyOrder: boolean): void {
  const add = (code: string, path: string, message: string) =>
    report({ code, path, message, provider: "openai_responses" });
  const missing = (path: string) => add("OR0", path, `Missing required parameter: '${path}'.`);
  const wrongType = (path: string, expected: string, value: unknown) =>
    add("OR0", path, `Invalid type for '${path}': expected ${expected}, but got ${jsonType(value)} instead.`);
  if (!("model" in body)) missing("model");
  const instructions = body.instructions;
  if (instructions !== undefined && instructions !== null && typeof instructions !== "string") {
    wrongType("instructions", "a string", instructions);
  }
  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) wrongType("tools", "an array", tools);
    else {
      tools.forEach((tool, k) => {
        if (!isDict(tool)) wrongType(`tools[${k}]`, "an object", tool);
        else if (tool.type === "function" && typeof tool.name !== "string") missing(`tools[${k}].name`);
      });
    }
  }
  // (paths and messages are built only for a problem found)
  const at = (i: number) => `input[${i}]`;
  const callIdOf = (item: Dict, i: number) => {
    const callId = item.call_id;
    if (typeof callId === "string" && callId && callId.length <= 64) return; // 1 to 64 characters: nothing to say
    const where = `${at(i)}.call_id`;
    if (callId === undefined || callId === null) missing(where);
    else if (typeof callId !== "string") wrongType(where, "a string", callId);
    else if (!callId) {
      add("OR0", where, `Invalid '${where}': empty string. Expected a string with minimum length 1, but got an ` +
        "empty string instead.");
    } else if (codePoints(callId) > 64) {
      add("OR3", where, `Invalid '${where}': string too long. Expected a string with maximum length 64, but got ` +
        `a string with length ${codePoints(callId)} instead.`);
    }
  };
  const parts = (list: unknown[], i: number, field: string, allowed: readonly string[]) => {
    list.forEach((part, j) => {
      if (!isDict(part)) {
        wrongType(`${at(i)}.${field}[${j}]`, "an object", part);
        return;
      }
      const kind = part.type;
      if (typeof kind === "string" && !KNOWN_PART_TYPES.includes(kind)) return; // the API's to judge
      if (!allowed.includes(kind as string)) {
        add("OR0", `${at(i)}.${field}[${j}].type`, `Invalid value: '${pyStr(kind)}'. Supported values are: ${listed(allowed)}.`);
      } else if ((kind === "input_text" || kind === "output_text") && typeof part.text !== "string") {
        missing(`${at(i)}.${field}[${j}].text`);
      } else if (kind === "input_image" && typeof (part.image_url || part.file_id) !== "string") {
        missing(`${at(i)}.${field}[${j}].image_url`);
      }
    });
  };
  const store = body.store;
  // the shape of each item
  const shapes = () => {
    items.forEach((item: Dict, i: number) => {
      const kind = item.type ?? "message";
      if (kind === "message") {
        const role = item.role;
        if (!ROLES.includes(role)) {
          add("OR0", `${at(i)}.role`, `Invalid value: '${pyStr(role)}'. Supported values are: 'assistant', 'system', ` +
            "'developer', and 'user'.");
        } else if (item.content === undefined && !("content" in item)) missing(`${at(i)}.content`);
        else if (Array.isArray(item.content)) {
          parts(item.content, i, "content", role === "assistant" ? ASSISTANT_PART_TYPES : OUTPUT_PART_TYPES);
        } else if (typeof item.content !== "string") {
          wrongType(`${at(i)}.content`, "one of a string or an array of content parts", item.content);
        }
      } else if (kind === "function_call") {
        callIdOf(item, i);
        if (typeof item.name !== "string") missing(`${at(i)}.name`);
        if (item.arguments === undefined && !("arguments" in item)) missing(`${at(i)}.arguments`);
        else if (typeof item.arguments !== "string") wrongType(`${at(i)}.arguments`, "a string", item.arguments);
      } else if (kind === "function_call_output" || kind === "custom_tool_call_output") {
        callIdOf(item, i);
        if (item.output === undefined && !("output" in item)) missing(`${at(i)}.output`);
        else if (Array.isArray(item.output)) parts(item.output, i, "output", OUTPUT_PART_TYPES);
        else if (typeof item.output !== "string") {
          wrongType(`${at(i)}.output`, "one of a string or an array of output content parts", item.output);
        }
      } else if (isClientCall(item) || (isClientOutput(item) && kind !== "local_shell_call_output")) {
        callIdOf(item, i);
      } else if (kind === "reasoning") {
        if (!("id" in item)) missing(`${at(i)}.id`);
        if (!Array.isArray(item.summary)) missing(`${at(i)}.summary`);
        if (store === false && typeof item.encrypted_content !== "string") add("OR9", at(i), notPersisted(item.id));
      } else if (kind === "item_reference" && store === false) {
        add("OR9", at(i), notPersisted(item.id));
      } else if (typeof kind !== "string") {
        wrongType(`${at(i)}.type`, "a string", kind);
      }
    });
  };
  // item ids: the type's prefix (OR4), their charset (OR5), no two alike (OR6)
  const itemIds = () => {
    const seen = new Set<string>();
    items.forEach((item: Dict, i: number) => {
      const itemId = item.id;
      if (itemId === undefined && !("id" in item)) return; // (a value read first: `in` is the slower question)
      const kind = item.type ?? "message";
      if (itemId === null && kind !== "item_reference") return; // null is the same as leaving it out
      const where = `input[${i}].id`;
      if (typeof itemId !== "string") {
        wrongType(where, "a string", itemId);
        return;
      }
      const prefix = ID_PREFIX[kind as string];
      if (!ITEM_ID.test(itemId)) {
        add("OR5", where, `Invalid '${where}': '${pyStr(itemId)}'. Expected an ID that contains letters, numbers, ` +
          "underscores, or dashes, but this value contained additional characters.");
      } else if (prefix !== undefined && !itemId.startsWith(prefix)) {
        add("OR4", where, `Invalid '${where}': '${pyStr(itemId)}'. Expected an ID that begins with '${prefix}'.`);
      }
      if (kind === "item_reference" || kind === "local_shell_call_output") return;
      if (seen.has(itemId)) {
        add("OR6", where, `Duplicate item found with id ${itemId}. Remove duplicate items from your input and try again.`);
      }
      seen.add(itemId);
    });
  };
  // OR1, OR2, OR10, OR11: every client call and its own output pair one to one by call_id, with no message between
  const pairs = () => {
    const duplicate = (kind: string, callId: string, each: string, matching: string) =>
      `Duplicate ${kind} for call_id '${callId}'. Each ${each} must have exactly one matching ${matching}`;
    const calls = new Map<string, number>(); // each call id's first call item (its kind is that item's type)
    const outputs = new Set<string>();
    const chained =
      (body.previous_response_id !== undefined && body.previous_response_id !== null) ||
      items.some((item: Dict) => item.type === "item_reference");
    let lastMessage = -1;
    items.forEach((item: Dict, i: number) => {
      const kind = (item.type ?? "message") as string;
      if (kind === "message" && item.role !== "assistant") lastMessage = i;
      if (isClientCall(item)) {
        const callId = item.call_id as string;
        if (!callId) return;
        if (calls.has(callId)) add("OR10", `input[${i}].call_id`, duplicate(kind, callId, kind, CALL_OUTPUTS[kind] as string));
        else calls.set(callId, i);
      } else if (isClientOutput(item)) {
        const callId = answeredId(item);
        if (typeof callId !== "string" || !callId) return;
        const callKind = OUTPUT_CALLS[kind] as string;
        if (outputs.has(callId)) {
          add("OR10", `input[${i}].call_id`, duplicate(kind, callId, callKind, kind));
          return;
        }
        outputs.add(callId);
        const callAt = calls.get(callId);
        const callType = callAt === undefined ? undefined : ((items[callAt] as Dict).type as string);
        if (callAt === undefined) {
          if (!chained) add("OR2", `input[${i}]`, `No tool call found for ${words(callKind)} output with call_id ${callId}.`);
        } else if (callType !== callKind && !(callType === "tool_search_call" && kind === "function_call_output")) {
          add("OR2", `input[${i}]`, `The ${kind} for call_id ${callId} answers a ${callType}, whose output is a ` +
            `${CALL_OUTPUTS[callType as string]}.`);
        } else if (lastMessage > callAt) {
          add("OR11", `input[${i}]`, `The ${kind} for call_id ${callId} is separated from its ${callKind} by the ` +
            `message at input[${lastMessage}].`);
        }
      }
    });
    calls.forEach((i, callId) => {
      if (outputs.has(callId)) return;
      add("OR1", `input[${i}]`, `No tool output found for ${words((items[i] as Dict).type as string)} ${callId}.`);
    });
  };
  // (asked only whether the list holds a problem, the pairs first: a broken list most often breaks them early)
  for (const pass of anyOrder ? [pairs, shapes, itemIds] : [shapes, itemIds, pairs]) pass();
  // OR7: a reasoning item is followed by the item it produced (the first after it that is not reasoning)
  const unfollowed: Problem[] = [];
  let following: Dict | undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as Dict;
    if (item.type !== "reasoning") {
      following = item;
      continue;
    }
    if (!(following !== undefined && isOutputItem(following) && typeof following.id === "string")) {
      unfollowed.push({ code: "OR7", path: `input[${i}]`, provider: "openai_responses",
        message: `Item '${pyStr(item.id)}' of type 'reasoning' was provided without its required following item.` });
    }
  }
  for (const problem of unfollowed.reverse()) report(problem);
}

const ROLES: readonly unknown[] = ["user", "assistant", "system", "developer"];
const OUTPUT_PART_TYPES: readonly string[] = ["input_text", "input_image", "input_file"];
const ASSISTANT_PART_TYPES: readonly string[] = ["output_text", "refusal"];
const KNOWN_PART_TYPES: readonly string[] = [...OUTPUT_PART_TYPES, ...ASSISTANT_PART_TYPES];
const ID_PREFIX: Readonly<Record<string, string>> = { function_call: "fc", custom_tool_call: "ctc", reasoning: "rs", message: "msg" };
const ITEM_ID = /^[A-Za-z0-9_-]+$/;

function notPersisted(itemId: unknown): string {
  return `Item with id '${pyStr(itemId)}' not found. Items are not persisted when \`store\` is set to false. ` +
    "Try again with `store` set to true, or remove this item from your input.";
}

/** A call type as OpenAI's errors say it: `function_call` -> "function call". */
function words(kind: string): string {
  return kind.replaceAll("_", " ");
}

/** Values listed as OpenAI's errors do: 'a' and 'b'; 'a', 'b', and 'c'. */
function listed(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  if (quoted.length < 3) return quoted.join(" and ");
  return `${quoted.slice(0, -1).join(", ")}, and ${quoted[quoted.length - 1]}`;
}

/** Whether an item is something the model produced (reasoning, an assistant message, a tool call). */
function isOutputItem(item: Dict): boolean {
  const kind = item.type ?? "message";
  if (kind === "message") return item.role === "assistant";
  if (typeof kind !== "string") return false;
  return !(kind.endsWith("_output") || INPUT_SIDE.includes(kind));
}

/** A value as Python's f-string writes it, for the strings and None this package writes; other values are
 * refused (their Python form is not ported). */
function pyStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "None";
  throw new UnsupportedBodyError("openai_responses", "a value whose Python form this package does not write");
}

// ----------------------------------------------------------------------------------------------- Gemini

const GE1 =
  "Please ensure that the number of function response parts is equal to the number of function call parts " +
  "of the function call turn.";

/** The fields that hold a part's data: a part has exactly one (GE0). */
const DATA_FIELDS = ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
  "codeExecutionResult", "toolCall", "toolResponse"];
/** google-genai's other `Part` fields: a part of only these has no data (GE0); a part with a key in neither list is
 * of a kind newer than chatmend, and passes. */
const PART_METADATA = ["thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata",
  "audioTranscription", "mediaProcessing", "speechMetadata", "documentMetadata", "spreadsheetMetadata",
  "audioMetadata"];

const KNOWN_PART_KEYS = new Set([...DATA_FIELDS, ...PART_METADATA].flatMap((name) => [name, snakeCase(name)]));

/** True for a part with a field google-genai's `Part` does not have: data of a kind added after it. */
function newerKind(part: Dict): boolean {
  for (const key in part) if (!KNOWN_PART_KEYS.has(key)) return true;
  return false;
}

/** A body path as the API names fields in its errors (snake_case). */
function apiPath(path: string): string {
  return path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The first `n` code points of a string, as Python slices one. */
function head(text: string, n: number): string {
  return Array.from(text).slice(0, n).join("");
}

/** Python's `json.dumps(value)` (ASCII only, `", "` and `": "` between items) of a JSON value; a number that is not
 * an integer is refused (its Python form is not ported). */
function pyDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") {
    return `"${value.replace(/[\\"]|[^ -~]/g, (c) => {
      const short: Record<string, string> = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
      return short[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
    })}"`;
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return pythonNumber(value);
  if (Array.isArray(value)) return `[${value.map(pyDumps).join(", ")}]`;
  return `{${Object.entries(value as Dict).map(([k, v]) => `${pyDumps(k)}: ${pyDumps(v)}`).join(", ")}}`;
}

/** Every `{"$ref": name}` inside a response object, in order (GE9). */
function refsOf(value: unknown, out: string[]): string[] {
  if (Array.isArray(value)) {
    for (const inner of value) refsOf(inner, out);
  } else if (isDict(value)) {
    if (typeof value.$ref === "string") out.push(value.$ref);
    for (const key in value) refsOf(value[key], out);
  }
  return out;
}

const NO_IDS: readonly (string | null)[] = [];

interface GeminiTurn {
  role: unknown;
  calls: (string | null)[];
  /** the first call's name, and whether its part carries a thought signature (GE4 asks it of the first) */
  firstName: string;
  firstSigned: boolean;
  responses: (string | null)[];
  /** true when the turn has a part other than a function response */
  standard: boolean;
}

/** A turn with no role, call or response yet (a turn without calls or without responses shares NO_IDS: no lists
 * built for them). */
function newTurn(): GeminiTurn {
  return {
    role: null,
    calls: NO_IDS as (string | null)[],
    firstName: "",
    firstSigned: false,
    responses: NO_IDS as (string | null)[],
    standard: false,
  };
}

/** What Gemini's checker is told beside the body: the model (GE4, GE10) and the platform (`vertex`: GE7, GE8). */
export interface CheckOptions {
  model?: string;
  platform?: "vertex";
}

/** The port of Python's Gemini checker (`providers/gemini/checker.py`): each content's shape (GE0, GE5-GE10), then
 * the turn rules (GE1-GE3) and the signatures (GE4). A malformed body is reported, never refused. With
 * `anyOrder`, a turn's problems are reported as soon as they are found rather than after every content's. */
function checkGemini(body: Dict, contents: Item[], report: Report, options: CheckOptions, anyOrder: boolean): void {
  const add = (code: string, path: string, message: string) => report({ code, path, message, provider: "gemini" });
  const model = options.model ?? (typeof body.model === "string" ? body.model : null);
  const vertex = options.platform === "vertex";

  const bytesField = (value: unknown, path: string) => {
    if (isBase64(value)) return;
    const shown = typeof value === "string" ? value : pyDumps(value);
    add("GE0", path, `Invalid value at '${apiPath(path)}' (TYPE_BYTES), Base64 decoding failed for "${head(shown, 40)}"`);
  };
  const stringField = (value: unknown, path: string) => {
    if (value !== undefined && value !== null && typeof value !== "string") {
      add("GE0", path, `Invalid value at '${apiPath(path)}' (TYPE_STRING), ${head(pyDumps(value), 40)}`);
    }
  };
  const blob = (part: Dict, path: string) => {
    const inline = field(part, "inlineData");
    if (inline !== undefined) {
      if (!isDict(inline)) {
        add("GE0", `${path}.inlineData`, "Invalid JSON payload received. Expected an object.");
        return;
      }
      bytesField(inline.data, `${path}.inlineData.data`);
      const mimeType = field(inline, "mimeType");
      stringField(mimeType, `${path}.inlineData.mimeType`);
      if (mimeType === undefined || mimeType === "") {
        add("GE0", `${path}.inlineData.mimeType`,
          `* GenerateContentRequest.${apiPath(path)}.inline_data.mime_type: mime_type must be specified.`);
      }
    }
    const file = field(part, "fileData");
    if (isDict(file)) {
      stringField(field(file, "fileUri"), `${path}.fileData.fileUri`);
      stringField(field(file, "mimeType"), `${path}.fileData.mimeType`);
    }
    const uri = isDict(file) ? field(file, "fileUri") : undefined;
    if (file !== undefined && (uri === undefined || uri === "")) {
      add("GE0", `${path}.fileData`, `* GenerateContentRequest.${apiPath(path)}.file_data.file_uri: file_uri must be specified.`);
    }
  };
  /** What a call and a response share: an object with a name (GE5), an object payload (GE0), no id on Vertex (GE8). */
  const functionPart = (value: unknown, path: string, payload: string): Dict => {
    const checked = isDict(value) ? value : {};
    if (!isDict(value)) add("GE0", path, `Invalid value at '${apiPath(path)}', expected an object.`);
    if (typeof checked.name !== "string" || !checked.name) {
      add("GE5", `${path}.name`, `* GenerateContentRequest.${apiPath(path)}.name: Name cannot be empty.`);
    }
    if (payload in checked && !isDict(checked[payload])) {
      const where = `${path}.${payload}`;
      add("GE0", where, `Invalid value at '${apiPath(where)}' (type.googleapis.com/google.protobuf.Struct), ` +
        head(pyDumps(checked[payload]), 40));
    }
    if ("id" in checked && vertex) {
      add("GE8", `${path}.id`, `Invalid JSON payload received. Unknown name "id" at '${apiPath(path)}': Cannot find field.`);
    } else if ("id" in checked) {
      stringField(checked.id, `${path}.id`);
    }
    return checked;
  };
  const functionResponse = (value: unknown, path: string, turn: GeminiTurn) => {
    const response = functionPart(value, path, "response");
    let inner = response.parts;
    const names = new Set<unknown>();
    if (inner !== undefined && inner !== null) {
      if (!Array.isArray(inner)) {
        add("GE0", `${path}.parts`, `Invalid value at '${apiPath(path)}.parts', expected a list.`);
        inner = [];
      } else if (inner.length > 0 && model && !isGemini3(model)) {
        add("GE10", `${path}.parts`, `Multimodal function response parts are not supported by model ${model}.`);
      }
      (inner as unknown[]).forEach((item, q) => {
        const where = `${path}.parts[${q}]`;
        if (!isDict(item) || (field(item, "inlineData") === undefined && field(item, "fileData") === undefined && !newerKind(item))) {
          add("GE0", where, `* GenerateContentRequest.${apiPath(where)}.data: required oneof field 'data' must have one ` +
            "initialized field");
          return;
        }
        blob(item, where);
        for (const media of [field(item, "inlineData"), field(item, "fileData")]) {
          const name = isDict(media) ? field(media, "displayName") : undefined;
          if (typeof name === "string") names.add(name);
        }
      });
    }
    for (const ref of refsOf(response.response, [])) {
      if (!names.has(ref)) {
        add("GE9", `${path}.response`, `The referenced name ${ref} in function_response.response does not match to a ` +
          "display_name in the function_response.parts.");
      }
    }
    if (turn.responses === NO_IDS) turn.responses = [];
    turn.responses.push(typeof response.id === "string" && response.id ? response.id : null);
  };
  /** One part: exactly one kind of data, well-formed calls and responses. */
  const part = (value: unknown, path: string, turn: GeminiTurn) => {
    if (!isDict(value)) {
      add("GE0", path, `Invalid value at '${apiPath(path)}', expected an object.`);
      return;
    }
    const kinds = DATA_FIELDS.filter((name) => field(value, name) !== undefined);
    if (kinds.length === 0) {
      if (newerKind(value)) turn.standard = true; // a kind of data newer than chatmend's list: the API's to judge
      else {
        add("GE0", path, `* GenerateContentRequest.${apiPath(path)}.data: required oneof field 'data' must have one ` +
          "initialized field");
      }
      return;
    }
    if (kinds.length > 1) {
      add("GE0", path, `Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '${kinds[1]}'`);
    }
    const signature = field(value, "thoughtSignature");
    if (signature !== undefined) bytesField(signature, `${path}.thoughtSignature`);
    const kind = kinds[0] as string;
    if (kind === "text" && typeof value.text !== "string") {
      add("GE0", `${path}.text`, `Invalid value at '${apiPath(path)}.text' (TYPE_STRING)`);
    } else if (kind === "inlineData" || kind === "fileData") {
      blob(value, path);
    } else if (kind === "functionCall") {
      const call = functionPart(field(value, kind), `${path}.functionCall`, "args");
      if (turn.calls === NO_IDS) {
        turn.calls = [];
        turn.firstName = pyStrName(call.name);
        turn.firstSigned = signature !== undefined;
      }
      turn.calls.push(typeof call.id === "string" && call.id ? call.id : null);
    } else if (kind === "functionResponse") {
      functionResponse(field(value, kind), `${path}.functionResponse`, turn);
    }
    if (kind !== "functionResponse") turn.standard = true;
  };
  /** One content: a valid role (GE7), parts (GE6), each part; what the turn rules need of it. */
  const content = (value: unknown, path: string): GeminiTurn => {
    const turn = newTurn();
    if (!isDict(value)) {
      add("GE0", path, `Invalid value at '${apiPath(path)}', expected an object.`);
      return turn;
    }
    const role = value.role ?? null;
    turn.role = role;
    if (role === null) {
      turn.role = "user"; // the Developer API defaults a missing role to user; Vertex refuses it (GE7)
      if (vertex) add("GE7", `${path}.role`, "Please use a valid role: user, model.");
    } else if (role === "system") {
      add("GE7", `${path}.role`, "Content with system role is not supported.");
    } else if (role !== "user" && role !== "model") {
      add("GE7", `${path}.role`, "Please use a valid role: user, model.");
    }
    const parts = value.parts;
    if (!Array.isArray(parts) || parts.length === 0) {
      add("GE6", `${path}.parts`, `* GenerateContentRequest.${apiPath(path)}.parts: contents.parts must not be empty.`);
      return turn;
    }
    parts.forEach((inner, j) => {
      part(inner, `${path}.parts[${j}]`, turn);
    });
    return turn;
  };

  const system = field(body, "systemInstruction");
  if (system !== undefined) {
    const parts = isDict(system) ? system.parts : undefined;
    if (!Array.isArray(parts) || parts.length === 0) {
      add("GE6", "systemInstruction.parts",
        "* GenerateContentRequest.system_instruction.parts: contents.parts must not be empty.");
    } else {
      const ignored = newTurn(); // (no turn rule reads the system instruction)
      parts.forEach((inner, j) => {
        part(inner, `systemInstruction.parts[${j}]`, ignored);
      });
    }
  }
  if (!Array.isArray(contents) || contents.length === 0) {
    add("GE6", "contents", "* GenerateContentRequest.contents: contents is not specified");
    return;
  }
  // GE1-GE3, each turn judged once the turn after it is read (with `anyOrder`, reported then: a caller asking
  // whether the list holds a problem stops at the first)
  const pairing: Problem[] = [];
  const judged = anyOrder ? add : (code: string, path: string, message: string) => {
    pairing.push({ code, path, message, provider: "gemini" });
  };
  let before: GeminiTurn | null = null;
  let turn: GeminiTurn | null = null;
  let unsigned: [number, string][] = []; // GE4: each call turn without a signature since the last user turn of words
  for (let i = 0; i <= contents.length; i++) {
    const after = i < contents.length ? content(contents[i], `contents[${i}]`) : undefined;
    if (turn !== null) judgeTurn(turn, before, after, i - 1, judged);
    if (after === undefined) break;
    if (after.role === "user" && after.standard) unsigned = [];
    else if (after.role === "model" && after.calls.length > 0 && !after.firstSigned) unsigned.push([i, after.firstName]);
    before = turn;
    turn = after;
  }
  for (const problem of pairing) report(problem);
  if (isGemini3(model)) {
    // GE4: the first call of each step of the current turn (since the last user turn of words) carries its signature
    for (const [i, name] of unsigned) add("GE4", `contents[${i}]`, GE4(name, i));
  }
}

/** A call's name as Python's `str(name or "")` writes it, for the names this package writes. */
function pyStrName(name: unknown): string {
  if (!name) return "";
  if (typeof name === "string") return name;
  if (typeof name === "number") return pythonNumber(name);
  throw new UnsupportedBodyError("gemini", "a call name whose Python form this package does not write");
}

/** GE1-GE3 of the turn at `i`: a call turn after a user turn and answered by the next; a response turn after a
 * call turn, one response per call. */
function judgeTurn(
  turn: GeminiTurn,
  before: GeminiTurn | null,
  after: GeminiTurn | undefined,
  i: number,
  add: (code: string, path: string, message: string) => void,
): void {
  if (turn.calls.length > 0) {
    if (before === null || before.role !== "user") {
      add("GE2", `contents[${i}]`, "Please ensure that function call turn comes immediately after a user turn or after a " +
        "function response turn.");
    }
    if (after === undefined || after.responses.length === 0) add("GE1", after ? `contents[${i + 1}]` : `contents[${i}]`, GE1);
  }
  if (turn.responses.length > 0) {
    if (before === null || before.calls.length === 0) {
      add("GE3", `contents[${i}]`, "Please ensure that function response turn comes immediately after a function call turn.");
    } else if (turn.responses.length !== before.calls.length) {
      add("GE1", `contents[${i}]`, GE1);
    } else if (before.calls.every(Boolean) && turn.responses.every(Boolean)) {
      // ids pair calls and responses only when both sides carry them; otherwise order does
      const ids = new Set(before.calls);
      const answered = new Set(turn.responses);
      const paired = ids.size === before.calls.length && ids.size === answered.size && [...ids].every((id) => answered.has(id));
      if (!paired) add("GE1", `contents[${i}]`, `${GE1} Function response ids must match the function call ids of that turn.`);
    }
  }
}

/** True for Gemini 3 and later, which enforce thought signatures (GE4). */
function isGemini3(model: unknown): boolean {
  const found = /^gemini-(\d+)/.exec(String(model ?? "").split("/").pop() as string);
  return found !== null && Number(found[1]) >= 3;
}

const GE4 = (name: string, position: number): string =>
  "Function call is missing a thought_signature in functionCall parts. This is required for tools to work " +
  "correctly, and missing thought_signature may lead to degraded model performance. Additional data, " +
  `function call \`default_api:${name}\` , position ${position}. Please refer to ` +
  "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.";

const CHECKERS: Partial<Record<ProviderName, Checker>> = {
  openai_chat: checkChat,
  anthropic: checkAnthropic,
  openai_responses: checkResponses,
  gemini: checkGemini,
};
