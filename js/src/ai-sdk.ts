/**
 * A bridge for the Vercel AI SDK: repair a `ModelMessage[]` with the one planner, as its own adapter (stubs of the
 * SDK's messages, its own writer for what repair writes), so that a history with a tool call and no result does not
 * throw `MissingToolResultsError`. Use it as `prepareStep: chatmendPrepareStep()` in `generateText`/`streamText`, or
 * call `repairModelMessages` yourself. No import of the SDK: the types here are the shapes it documents.
 */

import { assemble, type Item, type Writer } from "./assembly.js";
import { isBlank } from "./messages.js";
import { BLANK, CALLS, OTHER, planSpans, planUnchanged, type Ref, REPLY, RESULT } from "./planner.js";
import { type IsReadOnly, orphanNoteText, readsOnly, syntheticText } from "./repair.js";

/** The AI SDK's message shapes, as far as repair reads them (other fields pass through untouched). */
export interface SdkPart {
  type: string;
  [key: string]: unknown;
}
export interface SdkMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | SdkPart[];
  [key: string]: unknown;
}

export interface ModelMessagesRepair<M> {
  /** The repaired messages: the input's own objects where repair left a message alone. */
  messages: M[];
  /** The ids of the calls answered as interrupted, in history order. */
  interrupted: string[];
  changed: boolean;
}

function isCall(part: SdkPart): boolean {
  return part.type === "tool-call" && part.providerExecuted !== true; // (a provider-executed call is answered in place)
}

function isResult(part: SdkPart): boolean {
  return part.type === "tool-result";
}

/** Tool messages of several results split into one message a result (the SDK joins consecutive tool messages
 * again), so that each stub is one message. */
function oneResultEach(messages: readonly SdkMessage[]): SdkMessage[] {
  const out: SdkMessage[] = [];
  for (const message of messages) {
    if (message.role === "tool" && Array.isArray(message.content) && message.content.length > 1) {
      for (const part of message.content) out.push({ ...message, content: [part] });
    } else {
      out.push(message);
    }
  }
  return out;
}

function stubs(messages: readonly SdkMessage[]): { kinds: number[]; refs: Ref[] } {
  const kinds: number[] = [];
  const refs: Ref[] = [];
  for (const message of messages) {
    const content = message.content;
    if (message.role === "tool") {
      const part = Array.isArray(content) ? content[0] : undefined;
      if (part !== undefined && isResult(part)) {
        kinds.push(RESULT);
        refs.push(String(part.toolCallId ?? ""));
      } else {
        kinds.push(OTHER); // (an approval response, or empty: nothing repair pairs)
        refs.push(null);
      }
      continue;
    }
    if (message.role !== "assistant") {
      kinds.push(OTHER);
      refs.push(null);
      continue;
    }
    const parts = typeof content === "string" ? [] : content;
    const ids = parts.filter(isCall).map((part) => String(part.toolCallId ?? ""));
    const blank =
      typeof content === "string"
        ? isBlank(content)
        : parts.every((part) => part.type === "text" && isBlank(String(part.text ?? "")));
    kinds.push(ids.length > 0 ? CALLS : blank ? BLANK : REPLY);
    refs.push(ids.length > 0 ? ids : null);
  }
  return { kinds, refs };
}

function writer(): Writer {
  return {
    blocksKey: null,
    joinsTurns: false,
    renamedCalls(items, finalIds) {
      const message = items[0] as SdkMessage;
      let k = 0;
      const content = (message.content as SdkPart[]).map((part) =>
        isCall(part) ? { ...part, toolCallId: finalIds[k++] } : part,
      );
      return [{ ...message, content }];
    },
    renamedResult(piece, finalId) {
      const message = piece as SdkMessage;
      return [{ ...message, content: [{ ...(message.content as SdkPart[])[0], toolCallId: finalId }] }];
    },
    syntheticResult(calls, k, finalId, isReadOnly) {
      const call = ((calls[0] as SdkMessage).content as SdkPart[]).filter(isCall)[k] as SdkPart;
      const name = String(call.toolName);
      const value = syntheticText(name, readsOnly(isReadOnly, name));
      return [
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: finalId, toolName: name, output: { type: "error-text", value } }],
        },
      ];
    },
    note(piece) {
      const part = ((piece as SdkMessage).content as SdkPart[])[0] as SdkPart;
      const output = part.output as { type?: string; value?: unknown } | undefined;
      const isError = output?.type === "error-text" || output?.type === "error-json";
      const value = output?.value;
      const text = typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value);
      const note = orphanNoteText(String(part.toolName ?? "") || null, String(part.toolCallId ?? ""), isError, text);
      return [{ role: "user", content: [{ type: "text", text: note }] }];
    },
  };
}

/** `messages` (the AI SDK's `ModelMessage[]`) repaired by the spec's rules: every tool call has exactly one result
 * right after it under an id no other call uses; a call with none is answered as interrupted. */
export function repairModelMessages<M extends SdkMessage>(
  messages: readonly M[],
  options: { isReadOnly?: IsReadOnly } = {},
): ModelMessagesRepair<M> {
  const split = oneResultEach(messages);
  const { kinds, refs } = stubs(split);
  const plan = planSpans(kinds, refs);
  if (planUnchanged(plan)) return { messages: [...messages], interrupted: [], changed: false };
  const assembled = assemble(writer(), split as Item[], { kinds, refs }, plan, options.isReadOnly);
  // (the writer writes every step, so the assembly always succeeds)
  const [out] = assembled as [Item[], number[]];
  return { messages: out as M[], interrupted: plan.interrupted, changed: true };
}

/** A `prepareStep` for `generateText` / `streamText` that repairs the step's messages before they are sent. */
export function chatmendPrepareStep<M extends SdkMessage>(
  options: { isReadOnly?: IsReadOnly } = {},
): (step: { messages: M[] }) => { messages: M[] } | undefined {
  return ({ messages }) => {
    const repaired = repairModelMessages(messages, options);
    return repaired.changed ? { messages: repaired.messages } : undefined;
  };
}

/** A language model middleware (`wrapLanguageModel({ model, middleware: chatmendMiddleware() })`) that repairs the
 * prompt every call sends, whoever built it: the model's own prompt has the shapes of `ModelMessage[]`. */
export function chatmendMiddleware(options: { isReadOnly?: IsReadOnly } = {}): {
  transformParams: <P extends { prompt: SdkMessage[] }>(args: { params: P }) => Promise<P>;
} {
  return {
    transformParams: async ({ params }) => {
      const repaired = repairModelMessages(params.prompt, options);
      return repaired.changed ? { ...params, prompt: repaired.messages } : params;
    },
  };
}
