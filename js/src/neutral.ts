/**
 * `repairBody`'s neutral route (the port of Python's `Provider._neutral_repair_body` and `providers.body`): the
 * list is read into neutral messages, one group per item, `repairHistory` repairs them, and only the runs of
 * messages repair changed are written anew by the adapter's writer; an item whose messages all come out as they
 * went in, in place, is kept as the input's own object.
 */

import type { ChatMessage } from "./messages.js";

/** Output messages `start` to `end` are written anew; those from `lead` to `start` are kept items the writer
 * writes first, for context only (the calls the run's results answer), and does not return. */
export interface Run {
  lead: number;
  start: number;
  end: number;
}

/** For each output message, the index of the input item it is kept as (null: written anew): every message of a
 * kept item comes out in place, the same object, consecutive, in the item's order. `sources` tells, for each output
 * message, the input message it is (its index in the groups laid end to end; -1: written anew). */
export function keptItems(groups: readonly (readonly ChatMessage[])[], sources: readonly number[]): (number | null)[] {
  let total = 0;
  for (const group of groups) total += group.length;
  const position = new Int32Array(total).fill(-1); // each input message's output position
  for (let p = 0; p < sources.length; p++) {
    const q = sources[p] as number;
    if (q >= 0) position[q] = p;
  }
  const kept: (number | null)[] = new Array(sources.length).fill(null);
  let first = 0; // the index of the group's first message
  for (let r = 0; r < groups.length; r++) {
    const n = (groups[r] as readonly ChatMessage[]).length;
    const start = n > 0 ? (position[first] as number) : -1;
    let inPlace = start >= 0 && start + n <= sources.length;
    for (let k = 0; k < n && inPlace; k++) inPlace = sources[start + k] === first + k;
    if (inPlace) for (let k = 0; k < n; k++) kept[start + k] = r;
    first += n;
  }
  return kept;
}

/** The runs of output messages to write anew: a new call's message with its results, a kept item kept whole or
 * written whole, and a new result whose call stands in a kept item with that item as its run's lead. `messages`
 * is a repaired history: each call message's results stand right after it, one per call. */
export function planRewrite(messages: readonly ChatMessage[], kept: readonly (number | null)[]): Run[] {
  // for a result, the message of the call it answers (for any other message, itself)
  const caller = new Int32Array(messages.length);
  let head = 0;
  for (let p = 0; p < messages.length; p++) {
    if ((messages[p] as ChatMessage).role !== "tool") head = p;
    caller[p] = head;
  }
  // the first and last output message of each kept item (-1: none), indexed by the item
  let itemCount = 0;
  for (const r of kept) if (r !== null && r >= itemCount) itemCount = r + 1;
  const first = new Int32Array(itemCount).fill(-1);
  const last = new Int32Array(itemCount);
  kept.forEach((r, p) => {
    if (r === null) return;
    if (first[r] === -1) first[r] = p;
    last[r] = p;
  });
  const fresh = kept.map((r) => r === null);
  const todo: number[] = [];
  fresh.forEach((isNew, p) => {
    if (isNew) todo.push(p);
  });
  while (todo.length > 0) {
    const p = todo.pop() as number;
    const m = messages[p] as ChatMessage;
    // every message from p to its calls' results and its item's other messages is written with it
    let from = p;
    let to = p + (m.tool_calls?.length ?? 0);
    const r = kept[p];
    if (r !== null && r !== undefined) {
      from = Math.min(from, first[r] as number);
      to = Math.max(to, last[r] as number);
    }
    for (let i = from; i <= to; i++) {
      if (!fresh[i]) {
        fresh[i] = true;
        todo.push(i);
      }
    }
  }
  const runs: Run[] = [];
  let p = 0;
  while (p < messages.length) {
    if (!fresh[p]) {
      p += 1;
      continue;
    }
    let start = p;
    while (p < messages.length && fresh[p]) p += 1;
    let lead = start;
    for (let k = start; k < p; k++) lead = Math.min(lead, caller[k] as number);
    if (lead < start) {
      // from the first message of the item holding the call
      const r = kept[lead];
      lead = Math.min(lead, r !== null && r !== undefined ? (first[r] as number) : lead);
      while (runs.length > 0 && lead < (runs[runs.length - 1] as Run).end) {
        // the call stands before the end of the previous run: one run, so the writer sees the call first
        const previous = runs.pop() as Run;
        start = previous.start;
        lead = Math.min(lead, previous.lead);
      }
    }
    runs.push({ lead, start, end: p });
  }
  return runs;
}

/** True when the kept items come out in their input order (a moved result is kept, but elsewhere). */
export function inOrder(kept: readonly (number | null)[]): boolean {
  let last = -1;
  for (const r of kept) {
    if (r === null) continue;
    if (r < last) return false;
    last = r;
  }
  return true;
}

/** True when every input item is kept (items holding no message count as kept). */
export function everyItemKept(kept: readonly (number | null)[], groups: readonly (readonly ChatMessage[])[]): boolean {
  const held = new Set(kept);
  return groups.every((group, r) => held.has(r) || group.length === 0);
}
