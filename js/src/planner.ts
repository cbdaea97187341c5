/**
 * The spec's rules, decided once: what repair makes of a history, planned on stubs of its messages (the port of
 * Python's `chatmend.planner`).
 *
 * A stub is what the rules read of a message: its kind, and the ids repair pairs by. `planSpans` walks the stubs
 * once and returns a `SpanPlan`: which stretches of messages stay as they are, and what stands between them (calls
 * under new ids, a result under its call's final id, a synthetic result, a note), with the report. Whoever holds
 * the messages applies the plan: `repairHistory` to neutral messages, `repairBody` to a provider's wire items.
 *
 * Rules: 1 drop first (BLANK stubs), 2 spans (`run`), 3 pairing (`span`, `pairResults`), 4 span output (`span`),
 * 5 final ids (`FinalIds`). Rules 6 and 7 (the text of a synthetic result, of a note) are written by whoever
 * applies the plan.
 */

/** A user, system or developer message: never changed by repair, kept where it stands. */
export const OTHER = 0;
/** A tool result (its ref: the call id it answers, a string). */
export const RESULT = 1;
/** An assistant message with no calls and nothing but whitespace: rule 1 drops it. */
export const BLANK = 2;
/** An assistant message with no calls that is not blank: it ends a span. */
export const REPLY = 3;
/** An assistant message with calls (its ref: the calls' ids as written). */
export const CALLS = 4;
/** CALLS whose message says nothing else but whitespace (with `strip`, dropped when every call goes). */
export const BLANK_CALLS = 5;

/** Messages `index` to `argument` (excluded) kept as they are, in order. */
export const KEEP = 0;
/** The assistant message at `index` under new final ids (`argument`: each call's final id, null when stripped). */
export const CALL = 1;
/** The result at `index` under `argument`, the final id of the call it answers. */
export const ANSWER = 2;
/** A synthetic result for call `argument[0]` of the assistant message at `index`, under final id `argument[1]`. */
export const SYNTHETIC = 3;
/** The result at `index` turned into a user note; `argument`: the last assistant message with a call of its id. */
export const NOTE = 4;

export type Step =
  | readonly [typeof KEEP, number, number]
  | readonly [typeof CALL, number, (string | null)[]]
  | readonly [typeof ANSWER, number, string]
  | readonly [typeof SYNTHETIC, number, readonly [number, string]]
  | readonly [typeof NOTE, number, number];

/** One ref per stub: a CALLS stub's call ids, a RESULT stub's call id, null for the others. */
export type Ref = readonly string[] | string | null;

export interface Stubs {
  kinds: number[];
  refs: Ref[];
  /** The first message of each item, then the number of messages (absent when message i is item i). */
  starts?: number[];
  /** Where each message's parts begin in its item's content (with `starts`). */
  offsets?: number[];
  /** The list holds an item a turn may end with that the writer does not send alone (Responses: reasoning). */
  unsentAlone?: boolean;
  /** The list holds parts the writer moves out of their message (Chat: images beside a result, a system or an
   * assistant message). */
  movesOut?: boolean;
}

/** A call whose id changed: the assistant message's index, the call's index in it, old and new id. */
export interface RenamedId {
  messageIndex: number;
  callIndex: number;
  old: string;
  new: string;
}

export interface SpanPlan {
  steps: Step[];
  /** Every call's final id, in history order. */
  finalIds: string[];
  /** The final ids of the calls answered as interrupted, in history order. */
  interrupted: string[];
  /** Where each of those calls stands: [assistant message, call index]. */
  interruptedAt: [number, number][];
  /** Blank assistant messages dropped (rule 1), in order. */
  dropped: number[];
  /** Results moved to just after their call. */
  moved: number[];
  /** Results that pair with no call, turned into notes. */
  notes: number[];
  /** Calls whose id was empty or already used. */
  renamed: RenamedId[];
  /** With `strip`: the calls removed, [assistant message, call index], in history order. */
  strippedAt: [number, number][];
}

/** True when the plan keeps every message as it is, in place. */
export function planUnchanged(plan: SpanPlan): boolean {
  return plan.steps.length <= 1 && plan.dropped.length === 0 && plan.steps.every((step) => step[0] === KEEP);
}

/** Rule 5's final ids in history order: `call_{m}_{c}` for an empty id, `{id}_{k}` (smallest free k) for a repeat. */
export class FinalIds {
  readonly used = new Set<string>();
  readonly inOrder: string[] = [];
  private readonly nextK = new Map<string, number>();

  allocate(rawId: string, messageIndex: number, callIndex: number): string {
    const base = rawId || `call_${messageIndex}_${callIndex}`;
    if (!this.used.has(base)) {
      this.used.add(base);
      this.inOrder.push(base);
      return base;
    }
    let k = this.nextK.get(base) ?? 1; // the smallest free k only grows: each base resumes its last search
    let candidate = `${base}_${k}`;
    while (this.used.has(candidate)) {
      k += 1;
      candidate = `${base}_${k}`;
    }
    this.nextK.set(base, k + 1);
    this.used.add(candidate);
    this.inOrder.push(candidate);
    return candidate;
  }
}

export interface PlanOptions {
  /** Each NOTE names the last assistant message with a call of its id (for a reader that names results). */
  nameNotes?: boolean;
  /** The last reply's unanswered calls stay open (`repairHistory`'s `leaveOpenLast`). */
  leaveOpenLast?: boolean;
  /** Calls with no result are removed (`repairHistory`'s `onMissing: "strip"`). */
  strip?: boolean;
}

/** Rules 1 to 5 on stubs: the plan of what repair makes of the messages they stand for. */
export function planSpans(kinds: readonly number[], refs: readonly Ref[], options: PlanOptions = {}): SpanPlan {
  const planner = new Planner(kinds, refs, options);
  planner.run();
  return planner.plan;
}

/** One walk over a history's stubs. A stretch of messages kept as they are stays open (`keptFrom` to `keptTo`)
 * until something else must be said. */
class Planner {
  readonly plan: SpanPlan;
  private readonly ids = new FinalIds();
  private readonly caller: Map<string, number> | null;
  private readonly leaveOpenLast: boolean;
  private readonly strip: boolean;
  private keptFrom = 0;
  private keptTo = 0;

  constructor(
    private readonly kinds: readonly number[],
    private readonly refs: readonly Ref[],
    options: PlanOptions,
  ) {
    this.leaveOpenLast = options.leaveOpenLast ?? false;
    this.strip = options.strip ?? false;
    this.caller = options.nameNotes ? new Map() : null;
    this.plan = {
      steps: [],
      finalIds: this.ids.inOrder,
      interrupted: [],
      interruptedAt: [],
      dropped: [],
      moved: [],
      notes: [],
      renamed: [],
      strippedAt: [],
    };
  }

  /** Rule 2: every message, span by span. */
  run(): void {
    const { kinds, plan } = this;
    const stop = kinds.length;
    let i = 0;
    while (i < stop) {
      const kind = kinds[i] as number;
      if (kind === OTHER || kind === REPLY) {
        i += 1; // kept where it stands: the open stretch goes on over it
        continue;
      }
      this.keptTo = i;
      if (kind >= CALLS) {
        i = this.span(i);
        continue;
      }
      if (kind === BLANK) {
        plan.dropped.push(i); // rule 1
      } else {
        plan.notes.push(i); // rule 7: nothing before it in its span waits for a result
        this.say([NOTE, i, this.callerOf(i)]);
      }
      i += 1;
      this.skipTo(i);
    }
    this.keptTo = i;
    this.flush();
  }

  /** Rules 3 and 4 for the span at `start` (rule 5 for its calls); returns where the walk goes on. */
  private span(start: number): number {
    const { kinds, refs } = this;
    const n = kinds.length;
    const calls = refs[start] as readonly string[];
    if (this.caller !== null) {
      for (const callId of calls) this.caller.set(callId, start);
    }
    let finals: (string | null)[] | null = null;
    if (!this.strip) {
      // (with `strip`, which calls keep an id is known after pairing)
      const { used, inOrder } = this.ids;
      for (let ci = 0; ci < calls.length; ci++) {
        const callId = calls[ci] as string;
        if (!callId || used.has(callId)) {
          finals = this.finalIdsFrom(start, calls, ci);
          break;
        }
        used.add(callId);
        inOrder.push(callId);
      }
    }
    const first = start + 1;
    let index = first;
    for (const callId of calls) {
      // rule 3's common case: the results right after the calls, in call order (only a RESULT's ref is a string)
      if (index === n || refs[index] !== callId) break;
      index += 1;
    }
    const inPlace = index - first;
    const nCalls = calls.length;
    if (inPlace === nCalls && finals === null && !this.strip) {
      this.keptTo = index; // the open stretch goes on over the span
      return index;
    }
    const results: number[] = [];
    for (let k = first; k < index; k++) results.push(k);
    for (let k = inPlace; k < nCalls; k++) results.push(-1);
    let rest: number[] = [];
    if (inPlace < nCalls && index < n && (kinds[index] as number) < REPLY) {
      [index, rest] = this.pairResults(calls, index, results, inPlace);
    }
    const leaveOpen = this.leaveOpenLast && index === n; // the history ends in this span
    if (this.strip) finals = this.stripUnanswered(start, calls, results, leaveOpen);
    if (finals === null) {
      this.keptTo = first + inPlace; // the open stretch goes on over the results in place
      for (let ci = inPlace; ci < nCalls; ci++) {
        const at = results[ci] as number;
        if (at >= 0) this.keep(at);
        else if (!leaveOpen) this.synthetic(start, ci, calls[ci] as string);
      }
    } else {
      this.renamedSpan(start, finals, results, leaveOpen);
    }
    for (const at of rest) {
      if (at < 0) this.say([NOTE, -1 - at, this.callerOf(-1 - at)]);
      else this.keep(at);
    }
    this.skipTo(index);
    return index;
  }

  /** Rule 4 for a span whose calls changed (an id, or a call stripped): the calls, then each kept call's result. */
  private renamedSpan(start: number, finals: (string | null)[], results: number[], leaveOpen: boolean): void {
    this.flush(); // every step here is a new message
    const { steps } = this.plan;
    if (this.kinds[start] === BLANK_CALLS && finals.every((f) => f === null)) {
      insortNumber(this.plan.dropped, start); // every call stripped, nothing else said: as rule 1 drops it
    } else {
      steps.push([CALL, start, finals]);
    }
    for (let ci = 0; ci < results.length; ci++) {
      const final = finals[ci];
      if (final === null || final === undefined) continue;
      const at = results[ci] as number;
      if (at >= 0) steps.push([ANSWER, at, final]);
      else if (!leaveOpen) this.synthetic(start, ci, final);
    }
  }

  /** Call `ci` of the assistant message at `start` answered as interrupted (rule 6). */
  private synthetic(start: number, ci: number, final: string): void {
    this.plan.interrupted.push(final);
    this.plan.interruptedAt.push([start, ci]);
    this.say([SYNTHETIC, start, [ci, final]]);
  }

  /** Rule 5 for the calls from `ci` on, the first that cannot keep its id: every call's final id. */
  private finalIdsFrom(start: number, calls: readonly string[], ci: number): (string | null)[] {
    const finals: (string | null)[] = calls.slice(0, ci);
    for (let cj = ci; cj < calls.length; cj++) finals.push(this.allocate(start, cj, calls[cj] as string));
    return finals;
  }

  private allocate(start: number, ci: number, callId: string): string {
    const final = this.ids.allocate(callId, start, ci);
    if (final !== callId) this.plan.renamed.push({ messageIndex: start, callIndex: ci, old: callId, new: final });
    return final;
  }

  /** `strip`: the span's calls with no result go; rule 5 for the others alone. Null when every call stays as is. */
  private stripUnanswered(
    start: number,
    calls: readonly string[],
    results: number[],
    leaveOpen: boolean,
  ): (string | null)[] | null {
    const finals: (string | null)[] = [];
    let same = true;
    for (let ci = 0; ci < calls.length; ci++) {
      const callId = calls[ci] as string;
      let final: string | null;
      if ((results[ci] as number) < 0 && !leaveOpen) {
        this.plan.strippedAt.push([start, ci]);
        final = null;
      } else {
        final = this.allocate(start, ci, callId);
      }
      if (final !== callId) same = false;
      finals.push(final);
    }
    return same ? null : finals;
  }

  /** Rule 3: each result takes the first unanswered call with its original id; others become notes. Returns
   * where the span ends, and its other messages in order (`-1 - index` for a result that becomes a note). */
  private pairResults(
    calls: readonly string[],
    start: number,
    results: number[],
    firstOpen: number,
  ): [number, number[]] {
    const { kinds, refs, plan } = this;
    const n = kinds.length;
    const waiting = new Map<string, number>();
    for (let ci = calls.length - 1; ci >= firstOpen; ci--) waiting.set(calls[ci] as string, ci);
    const later = waiting.size < calls.length - firstOpen ? nextWithSameId(calls) : null;
    const rest: number[] = [];
    let inPlace = true;
    let last = firstOpen - 1;
    let index = start;
    while (index < n) {
      const kind = kinds[index] as number;
      if (kind === RESULT) {
        const callId = refs[index] as string;
        const ci = waiting.get(callId) ?? -1;
        if (ci >= 0) {
          waiting.delete(callId);
          results[ci] = index;
          if (later !== null && (later[ci] as number) >= 0) waiting.set(callId, later[ci] as number);
          if (inPlace && ci > last) last = ci;
          else plan.moved.push(index);
        } else {
          plan.notes.push(index);
          rest.push(-1 - index);
          inPlace = false;
        }
      } else if (kind >= REPLY) {
        break; // the next span, or a reply: this span ends here
      } else if (kind === BLANK) {
        plan.dropped.push(index); // a placeholder (rule 1)
      } else {
        inPlace = false;
        rest.push(index);
      }
      index += 1;
    }
    return [index, rest];
  }

  private callerOf(result: number): number {
    return this.caller === null ? -1 : (this.caller.get(this.refs[result] as string) ?? -1);
  }

  private keep(index: number): void {
    if (index !== this.keptTo) {
      this.flush();
      this.keptFrom = index;
    }
    this.keptTo = index + 1;
  }

  private say(step: Step): void {
    this.flush();
    this.plan.steps.push(step);
  }

  private skipTo(index: number): void {
    if (this.keptTo !== index) {
      this.flush();
      this.keptFrom = this.keptTo = index;
    }
  }

  private flush(): void {
    if (this.keptTo > this.keptFrom) this.plan.steps.push([KEEP, this.keptFrom, this.keptTo]);
    this.keptFrom = this.keptTo;
  }
}

/** For each call of one reply (by id), the index of the next call with the same id (-1: none). */
function nextWithSameId(ids: readonly string[]): number[] {
  const later = new Array<number>(ids.length).fill(-1);
  const seen = new Map<string, number>();
  for (let ci = ids.length - 1; ci >= 0; ci--) {
    later[ci] = seen.get(ids[ci] as string) ?? -1;
    seen.set(ids[ci] as string, ci);
  }
  return later;
}

function insortNumber(list: number[], value: number): void {
  let at = list.length;
  while (at > 0 && (list[at - 1] as number) > value) at -= 1;
  list.splice(at, 0, value);
}
