/**
 * `repairHistory`: make any saved, resumed or interrupted history valid to send (the spec: docs/rules.md). The
 * messages are stubbed (`stubHistory`), the planner plans (rules 1-5), and the plan is applied here, writing what
 * rules 6 and 7 say. Messages the plan keeps are the input's own objects; changed ones are new objects.
 */

import {
  type ChatMessage,
  checkMessage,
  HistoryError,
  laxBool,
  type Part,
  saysNothing,
  type ToolCall,
} from "./messages.js";
import {
  ANSWER,
  BLANK,
  BLANK_CALLS,
  CALL,
  CALLS,
  KEEP,
  OTHER,
  planSpans,
  type Ref,
  type RenamedId,
  REPLY,
  RESULT,
  SYNTHETIC,
} from "./planner.js";

/** Tells whether a tool only reads (safe to run again) from its name. */
export type IsReadOnly = (toolName: string) => boolean;
/** A synthetic result's text per tool name: a function (null or undefined: the default) or a record. */
export type Wording = ((toolName: string) => string | null | undefined) | Readonly<Record<string, string>>;

export interface RepairOptions {
  /** Picks the wording of a synthetic result; without it every tool may have partly run. */
  isReadOnly?: IsReadOnly;
  /** Your own text for a synthetic result, per tool. */
  wording?: Wording;
  /** Leave the last reply's unanswered calls open, for the caller to run. */
  leaveOpenLast?: boolean;
  /** What repair does with a call that has no result: answer it as interrupted (the spec), or strip it. */
  onMissing?: "answer" | "strip";
  /** How a synthetic result says it is one: an error result ("error", "field"), or a plain one ("none"). */
  mark?: "error" | "field" | "none";
}

export interface RepairResult {
  /** The repaired history: the input's own objects where repair left a message alone. */
  messages: ChatMessage[];
  /** The calls answered as interrupted, under the ids the request carries, in history order. */
  interrupted: ToolCall[];
  /** Where each of those calls stands: [assistant message, call index] (input positions). */
  interruptedAt: [number, number][];
  /** Blank assistant messages dropped (rule 1). */
  dropped: number[];
  /** Results moved to just after their call. */
  moved: number[];
  /** Results that paired with no call, turned into user notes. */
  notes: number[];
  /** Calls whose id was empty or already used. */
  renamed: RenamedId[];
  /** Every call's final id, in history order. */
  finalIds: string[];
  /** With `onMissing: "strip"`: the calls removed, as they were. */
  stripped: ToolCall[];
  strippedAt: [number, number][];
}

const READ_ONLY_WORDING =
  "Interrupted: the call to {name} was cut off before it returned a result. " +
  "The tool only reads, so it is safe to run it again.";
const MAY_HAVE_RUN_WORDING =
  "Interrupted: the call to {name} was cut off before it returned a result. " +
  "The tool may have partly run: check its effects before running it again.";

/** Rule 6's text for a call to tool `name`. */
export function syntheticText(name: string, readOnly: boolean): string {
  return (readOnly ? READ_ONLY_WORDING : MAY_HAVE_RUN_WORDING).replace("{name}", () => name);
}

/** Rule 6's choice of wording: true when `isReadOnly` is given and says tool `name` only reads. */
export function readsOnly(isReadOnly: IsReadOnly | undefined, name: string): boolean {
  return isReadOnly !== undefined && Boolean(isReadOnly(name));
}

/** Rule 7's text of a note of a result with this text output (`more`: it had other parts too). */
export function orphanNoteText(
  toolName: string | null | undefined,
  callId: string | null | undefined,
  isError: boolean,
  output: string,
  more = false,
): string {
  const tool = toolName ? `tool: ${toolName}, ` : "";
  const header =
    `A tool result arrived with no matching tool call (${tool}id: ${callId || "(empty)"}, ` +
    `error: ${isError ? "yes" : "no"}).`;
  return output || more ? `${header} Its output follows.\n${output}` : `${header} It had no output.`;
}

/** Rule 7: a tool result with no call to answer, as a user note that loses nothing of it. */
export function orphanNote(result: ChatMessage): ChatMessage {
  const content = result.content ?? "";
  const others: Part[] = [];
  let text: string;
  if (typeof content === "string") {
    text = content;
  } else {
    const texts: string[] = [];
    for (const part of content) {
      if (part.type === "text") texts.push(part.text);
      else others.push(part);
    }
    text = texts.join("\n");
  }
  const isError = laxBool(result.is_error) === true;
  const note = orphanNoteText(result.tool_name, result.tool_call_id, isError, text, others.length > 0);
  return { role: "user", content: [{ type: "text", text: note }, ...others] };
}

/** The planner's stubs of neutral messages: each one's kind, and the ids repair pairs it by. */
export function stubHistory(messages: readonly ChatMessage[]): { kinds: number[]; refs: Ref[] } {
  const kinds: number[] = [];
  const refs: Ref[] = [];
  for (const message of messages) {
    if (message.role !== "assistant") {
      kinds.push(message.role === "tool" ? RESULT : OTHER);
      refs.push(message.role === "tool" ? (message.tool_call_id as string) : null);
      continue;
    }
    const blank = saysNothing(message.content);
    const calls = message.tool_calls;
    if (calls && calls.length > 0) {
      kinds.push(blank ? BLANK_CALLS : CALLS);
      refs.push(calls.map((call) => call.id ?? ""));
    } else {
      kinds.push(blank ? BLANK : REPLY);
      refs.push(null);
    }
  }
  return { kinds, refs };
}

/**
 * Make a history valid to send: every call has exactly one result, right after it, under an id no other call uses.
 * Pure and deterministic; the input is not mutated; repairing the result changes nothing.
 */
export function repairHistory(messages: readonly ChatMessage[], options: RepairOptions = {}): RepairResult {
  if (!Array.isArray(messages)) throw new HistoryError(`expected a list of messages, got ${typeof messages}`);
  messages.forEach(checkMessage);
  return repairTraced(messages, options)[0];
}

/** `repairHistory` of messages known to be of the model's shape (a reader's, which builds no other), and for each
 * output message the index of the input message it is (the same object), or -1 for a message written anew (the
 * neutral route tells the items repair kept by it). */
export function repairTraced(messages: readonly ChatMessage[], options: RepairOptions = {}): [RepairResult, number[]] {
  const onMissing = options.onMissing ?? "answer";
  if (onMissing !== "answer" && onMissing !== "strip") {
    throw new TypeError(`onMissing must be 'answer' or 'strip', not ${JSON.stringify(onMissing)}`);
  }
  const mark = options.mark ?? "error";
  if (mark !== "error" && mark !== "field" && mark !== "none") {
    throw new TypeError(`mark must be 'error', 'field' or 'none', not ${JSON.stringify(mark)}`);
  }
  const { kinds, refs } = stubHistory(messages);
  const plan = planSpans(kinds, refs, { leaveOpenLast: options.leaveOpenLast ?? false, strip: onMissing === "strip" });
  const out: ChatMessage[] = [];
  const sources: number[] = [];
  const interrupted: ToolCall[] = [];
  for (const step of plan.steps) {
    const index = step[1];
    const message = messages[index] as ChatMessage;
    switch (step[0]) {
      case KEEP:
        for (let k = index; k < step[2]; k++) {
          out.push(messages[k] as ChatMessage);
          sources.push(k);
        }
        continue;
      case CALL:
        out.push(withCalls(message, step[2]));
        break;
      case ANSWER:
        if (message.tool_call_id === step[2]) {
          out.push(message);
          sources.push(index);
          continue;
        }
        out.push({ ...message, tool_call_id: step[2] });
        break;
      case SYNTHETIC: {
        const [ci, final] = step[2];
        let call = (message.tool_calls as ToolCall[])[ci] as ToolCall;
        if (call.id !== final) call = { ...call, id: final };
        interrupted.push(call);
        out.push(synthetic(call, options, mark !== "none"));
        break;
      }
      default:
        out.push(orphanNote(message));
    }
    sources.push(-1);
  }
  const stripped = plan.strippedAt.map(([m, c]) => (messages[m]?.tool_calls as ToolCall[])[c] as ToolCall);
  const result: RepairResult = {
    messages: out,
    interrupted,
    interruptedAt: plan.interruptedAt,
    dropped: plan.dropped,
    moved: plan.moved,
    notes: plan.notes,
    renamed: plan.renamed,
    finalIds: plan.finalIds,
    stripped,
    strippedAt: plan.strippedAt,
  };
  return [result, sources];
}

/** A CALL step: the assistant message with its calls under their final ids, without those stripped (null). */
function withCalls(assistant: ChatMessage, finals: readonly (string | null)[]): ChatMessage {
  const calls = assistant.tool_calls as ToolCall[];
  const kept: ToolCall[] = [];
  calls.forEach((call, k) => {
    const final = finals[k];
    if (final === null || final === undefined) return;
    kept.push(call.id === final ? call : { ...call, id: final });
  });
  return { ...assistant, tool_calls: kept };
}

/** A SYNTHETIC step: rule 6's result, with the options' wording and mark. */
function synthetic(call: ToolCall, options: RepairOptions, marked: boolean): ChatMessage {
  let text = syntheticText(call.name, readsOnly(options.isReadOnly, call.name));
  const wording = options.wording;
  if (wording !== undefined) {
    const own = typeof wording === "function" ? wording(call.name) : Object.hasOwn(wording, call.name) ? wording[call.name] : undefined;
    if (own !== null && own !== undefined) {
      if (typeof own !== "string") throw new TypeError(`wording for ${JSON.stringify(call.name)} must be a string`);
      text = own;
    }
  }
  const result: ChatMessage = { role: "tool", tool_call_id: call.id, tool_name: call.name, content: text };
  if (marked) result.is_error = true;
  return result;
}
