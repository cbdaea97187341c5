/** Tool call ids: `normalizeToolId` (Python's `chatmend.ids.normalize_tool_id`), with the SHA-256 it digests by
 * (written here: the package has no dependency and runs where `node:crypto` is not). */

// Globals of Node 20+ and browsers alike (the package compiles against ES2022 alone, without DOM or Node types).
declare const TextEncoder: new () => { encode(text: string): Uint8Array };
declare const crypto: { getRandomValues<T extends Uint8Array>(array: T): T };

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** The SHA-256 of `data`, as lowercase hex. */
export function sha256Hex(data: Uint8Array): string {
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const length = data.length;
  const blocks = Math.ceil((length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(data);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length * 8) >>> 0);
  const w = new Uint32Array(64);
  for (let b = 0; b < blocks; b++) {
    for (let t = 0; t < 16; t++) w[t] = view.getUint32(b * 64 + t * 4);
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15] as number;
      const y = w[t - 2] as number;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = ((w[t - 16] as number) + s0 + (w[t - 7] as number) + s1) >>> 0;
    }
    let [a, bb, c, d, e, f, g, hh] = h as unknown as number[];
    for (let t = 0; t < 64; t++) {
      const e1 = ((e as number) >>> 6 | (e as number) << 26) ^ ((e as number) >>> 11 | (e as number) << 21) ^
        ((e as number) >>> 25 | (e as number) << 7);
      const ch = ((e as number) & (f as number)) ^ (~(e as number) & (g as number));
      const t1 = ((hh as number) + e1 + ch + (K[t] as number) + (w[t] as number)) >>> 0;
      const a1 = ((a as number) >>> 2 | (a as number) << 30) ^ ((a as number) >>> 13 | (a as number) << 19) ^
        ((a as number) >>> 22 | (a as number) << 10);
      const maj = ((a as number) & (bb as number)) ^ ((a as number) & (c as number)) ^ ((bb as number) & (c as number));
      const t2 = (a1 + maj) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = ((d as number) + t1) >>> 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) >>> 0;
    }
    const next = [a, bb, c, d, e, f, g, hh] as number[];
    for (let k = 0; k < 8; k++) h[k] = ((h[k] as number) + (next[k] as number)) >>> 0;
  }
  return Array.from(h, (word) => word.toString(16).padStart(8, "0")).join("");
}

const HASH_LEN = 10;
const SAFE = /^[a-zA-Z0-9_-]+$/;
const UNSAFE_CHAR = /[^a-zA-Z0-9_-]/gu;

/** A short stable hex digest of `text` (the same in every process and in Python). */
export function digest(text: string, length = HASH_LEN): string {
  return sha256Hex(new TextEncoder().encode(text)).slice(0, length);
}

/**
 * An id matching `^[a-zA-Z0-9_-]+$` of at most `maxLength` characters. A valid id comes back as it is; otherwise
 * other characters become `_` and a stable hash of the whole original id is appended (shortening the id to fit), so
 * two different ids do not become one. An empty id gets a random `call_<hex>`, the one case that is not
 * deterministic (`repairHistory` never reaches it).
 */
export function normalizeToolId(toolId: string, maxLength = 64): string {
  if (maxLength < HASH_LEN + 2) throw new RangeError(`maxLength must be at least ${HASH_LEN + 2}, got ${maxLength}`);
  if (!toolId) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return `call_${Array.from(bytes, (x) => x.toString(16).padStart(2, "0")).join("")}`.slice(0, maxLength);
  }
  const chars = [...toolId];
  if (chars.length <= maxLength && SAFE.test(toolId)) return toolId;
  const stem = [...toolId.replace(UNSAFE_CHAR, "_")].slice(0, maxLength - HASH_LEN - 1).join("");
  return `${stem}_${digest(toolId)}`;
}

/** Proposes the wire id of a final id (`attempt` > 0: after the earlier proposals were taken). */
export type IdMaker = (finalId: string, attempt: number) => string;

function firstChars(text: string, n: number): string {
  return Array.from(text).slice(0, Math.max(n, 0)).join("");
}

/** Any character may stand in an id, at most `maxLength` of them: a longer or empty id becomes its first
 * characters, `_` and a stable digest of the whole id (salted with the attempt on a retry). */
export function shorteningIdMaker(maxLength: number): IdMaker {
  const keep = maxLength - HASH_LEN - 1; // room for "_" and the digest
  return (finalId, attempt) => {
    if (attempt === 0 && finalId.length > 0 && codePointCount(finalId) <= maxLength) return finalId;
    return `${firstChars(finalId, keep)}_${digest(attempt === 0 ? finalId : `${finalId}#${attempt}`)}`;
  };
}

/** Only the characters `unsafe` does not match may stand in an id: each other one becomes `_`, the id is cut to
 * `maxLength`; on a retry a digest of the id tells them apart. */
export function sanitizingIdMaker(maxLength: number | null, unsafe: RegExp): IdMaker {
  const limit = maxLength ?? Number.MAX_SAFE_INTEGER;
  const keep = limit - HASH_LEN - 1;
  return (finalId, attempt) => {
    const safe = finalId.replace(unsafe, "_");
    if (attempt === 0) return firstChars(safe, limit) || "call";
    return `${firstChars(safe, keep) || "call"}_${digest(`${finalId}#${attempt}`)}`;
  };
}

function codePointCount(text: string): number {
  return Array.from(text).length;
}

/** The wire id of every call, from the final ids in history order, collision-free: each proposal taken by an
 * earlier call is asked again (each wire id depends only on the ids before it: prefix stability). */
export function wireIds(make: IdMaker, finalIds: readonly string[]): string[] {
  const proposals = finalIds.map((id) => make(id, 0));
  if (new Set(proposals).size === proposals.length) return proposals;
  const taken = new Set<string>();
  return finalIds.map((id, k) => {
    let proposal = proposals[k] as string;
    for (let attempt = 1; taken.has(proposal); attempt++) proposal = make(id, attempt);
    taken.add(proposal);
    return proposal;
  });
}
