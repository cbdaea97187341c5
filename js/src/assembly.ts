/**
 * `repairBody`'s assembly (the port of Python's `chatmend.providers.assembly`): the list a plan makes, from the
 * input's items and the adapter's writer. Every message the plan keeps stays as the input's own item (or, in a
 * turn of several messages, as the input's own blocks), and each new message is written by one of the adapter's
 * hooks. Where an item holds several messages (`blocksKey`: a user turn of results and words), the new and kept
 * blocks of a changed turn are gathered into one new user turn; with `joinsTurns`, new blocks that stand alone join
 * the user turn just before them, or else the one just after them.
 */

import { ANSWER, CALL, KEEP, type Ref, SYNTHETIC, type SpanPlan, type Stubs } from "./planner.js";
import type { IsReadOnly } from "./repair.js";

// biome-ignore lint/suspicious/noExplicitAny: wire items are any JSON the provider takes
export type Item = any;

/** What an adapter writes of the steps of a plan (null: not written here; the body then needs the neutral route). */
export interface Writer {
  readonly blocksKey: string | null;
  readonly joinsTurns: boolean;
  /** (`before`: the items written before them, whose item ids the provider takes once only) */
  renamedCalls(items: Item[], finalIds: readonly (string | null)[], before: readonly Item[]): Item[] | null;
  /** (`call`: the items of the call message renamed last and its calls' final ids, when one came before) */
  renamedResult(piece: Item, finalId: string, call: [Item[], readonly (string | null)[]] | null): Item[] | null;
  syntheticResult(calls: Item[], k: number, finalId: string, isReadOnly: IsReadOnly | undefined): Item[] | null;
  /** (`ref`: the call id the piece answers, as the stubs read it) */
  note(piece: Item, caller: Item[] | null, ref: Ref): Item[] | null;
  /** The blocks of a user turn written anew (with `blocksKey`), as the writer writes them (default: as they are). */
  turnBlocks?(blocks: Item[]): Item[];
}

/** The list `plan` makes of `items`, and the positions of the items written anew; null when a step is one the
 * adapter does not write. */
export function assemble(
  writer: Writer,
  items: Item[],
  stubs: Stubs,
  plan: SpanPlan,
  isReadOnly: IsReadOnly | undefined,
): [Item[], number[]] | null {
  return new Assembly(writer, items, stubs, isReadOnly).run(plan);
}

function bisectRight(list: readonly number[], value: number, lo = 0, hi = list.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (value < (list[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function bisectLeft(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

class Assembly {
  private readonly key: string | null;
  private readonly starts: number[] | null;
  private readonly offsets: number[] | null;
  private readonly out: Item[] = [];
  private readonly rewritten: number[] = [];
  private blocks: Item[] = [];
  private inTurn = false; // the blocks gathered hold some of an input turn's: they are that turn, rebuilt
  private lastCall: [Item[], readonly (string | null)[]] | null = null; // the call message renamed last
  private readonly refs: readonly Ref[];

  constructor(
    private readonly writer: Writer,
    private readonly items: Item[],
    stubs: Stubs,
    private readonly isReadOnly: IsReadOnly | undefined,
  ) {
    this.key = writer.blocksKey;
    this.offsets = stubs.offsets ?? null;
    this.refs = stubs.refs;
    // (one more start: a lookup past the last item finds the end of the list)
    this.starts = stubs.starts ? [...stubs.starts, (stubs.starts[stubs.starts.length - 1] as number) + 1] : null;
  }

  /** The item holding message `m` (with `blocksKey`). */
  private itemOf(m: number): number {
    return bisectRight(this.starts as number[], m) - 1;
  }

  /** The first item of message `m`, without `blocksKey` (a message may span items: Responses' calls). */
  private firstItem(m: number): number {
    return this.starts === null ? m : bisectLeft(this.starts, m);
  }

  private itemsOf(m: number): Item[] {
    if (this.key !== null) return [this.items[this.itemOf(m)]];
    if (this.starts === null) return [this.items[m]];
    return this.items.slice(this.firstItem(m), this.firstItem(m + 1));
  }

  private pieceOf(m: number): Item {
    if (this.key === null) return this.items[this.firstItem(m)];
    return this.items[this.itemOf(m)][this.key][(this.offsets as number[])[m] as number];
  }

  private blocksOf(r: number, m: number, stop: number): Item[] {
    const starts = this.starts as number[];
    const offsets = this.offsets as number[];
    const content: Item[] = this.items[r][this.key as string];
    return content.slice(offsets[m], stop < (starts[r + 1] as number) ? offsets[stop] : content.length);
  }

  run(plan: SpanPlan): [Item[], number[]] | null {
    const { writer } = this;
    for (const step of plan.steps) {
      const index = step[1];
      let written: Item[] | null;
      switch (step[0]) {
        case KEEP:
          this.keep(index, step[2]);
          continue;
        case CALL:
          this.lastCall = [this.itemsOf(index), step[2]];
          written = writer.renamedCalls(this.lastCall[0], step[2], this.out);
          if (written === null) return null;
          this.close();
          for (let k = 0; k < written.length; k++) this.rewritten.push(this.out.length + k);
          this.out.push(...written);
          continue;
        case ANSWER:
          written = writer.renamedResult(this.pieceOf(index), step[2], this.lastCall);
          break;
        case SYNTHETIC:
          written = writer.syntheticResult(this.itemsOf(index), step[2][0], step[2][1], this.isReadOnly);
          break;
        default:
          written = writer.note(this.pieceOf(index), step[2] >= 0 ? this.itemsOf(step[2]) : null, this.refs[index] ?? null);
      }
      if (written === null) return null;
      this.add(written);
    }
    this.close();
    return [this.out, this.rewritten];
  }

  /** Messages `start` to `end` (excluded) as they were. */
  private keep(start: number, end: number): void {
    if (this.key === null) {
      const [first, last] = this.starts === null ? [start, end] : [this.firstItem(start), this.firstItem(end)];
      for (let k = first; k < last; k++) this.out.push(this.items[k]);
      return;
    }
    const starts = this.starts as number[];
    let r = this.itemOf(start);
    if (start !== starts[r]) {
      // it begins inside a turn: that turn's blocks from there on
      const stop = Math.min(end, starts[r + 1] as number);
      this.blocks.push(...this.blocksOf(r, start, stop));
      this.inTurn = true;
      if (stop === end) return;
      r += 1;
    }
    const last = this.itemOf(end); // the items before it are kept whole; from it, the blocks before `end`
    if (
      last > r &&
      this.blocks.length > 0 &&
      this.writer.joinsTurns &&
      !this.inTurn &&
      !this.afterUser() &&
      userTurn(this.items[r]) &&
      !ownTurn(this.items, r)
    ) {
      this.blocks.push(...this.items[r][this.key]); // new blocks after the calls' turn open the user turn after it
      this.inTurn = true;
      r += 1;
    }
    if (last > r) {
      this.close();
      for (let k = r; k < last; k++) this.out.push(this.items[k]);
    }
    if ((starts[last] as number) < end) {
      this.blocks.push(...this.blocksOf(last, starts[last] as number, end));
      this.inTurn = true;
    }
  }

  private add(written: Item[]): void {
    if (this.key !== null) {
      this.blocks.push(...written);
      return;
    }
    for (let k = 0; k < written.length; k++) this.rewritten.push(this.out.length + k);
    this.out.push(...written);
  }

  /** The gathered blocks as one new user turn (with `joinsTurns`, one with a user turn kept just before). */
  private close(): void {
    if (this.blocks.length === 0) return;
    const key = this.key as string;
    const { out } = this;
    if (this.writer.joinsTurns && !this.inTurn && this.afterUser()) {
      const lastItem = out[out.length - 1];
      out[out.length - 1] = { ...lastItem, [key]: [...lastItem[key], ...this.blocks] };
      if (this.rewritten.length === 0 || this.rewritten[this.rewritten.length - 1] !== out.length - 1) {
        this.rewritten.push(out.length - 1);
      }
    } else {
      const blocks = this.writer.turnBlocks?.(this.blocks) ?? this.blocks;
      if (blocks.length > 0) {
        this.rewritten.push(out.length);
        out.push({ role: "user", [key]: blocks });
      }
    }
    this.blocks = [];
    this.inTurn = false;
  }

  private afterUser(): boolean {
    return this.out.length > 0 && this.out[this.out.length - 1]?.role === "user";
  }
}

/** True for a Gemini content without a role right after another user turn: only Python's neutral route reads it
 * (its stubs take no such content), and its reader marks it a turn of its own, which its writer never joins. */
function ownTurn(items: Item[], r: number): boolean {
  const item = items[r];
  return item.role === undefined && "parts" in item && userTurn(items[r - 1]);
}

/** True for a user turn (Gemini's content without a role is one). */
function userTurn(item: Item | undefined): boolean {
  return item !== undefined && (item.role === "user" || (item.role === undefined && "parts" in item));
}
