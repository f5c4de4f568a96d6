import { randomFillSync } from "node:crypto";

/** Produces unique ids; pass your own to `compile({ ids })` for deterministic tests. */
export type IdGenerator = () => string;

let lastMillis = 0;
let sequence = 0;

// One system call fills random bytes for 256 ids: asking per id costs more than the rest of
// the id, and ids are made on every step.
const POOL_IDS = 256;
const pool = Buffer.alloc(16 * POOL_IDS);
let poolOffset = pool.length;

function nextRandom16(): Buffer {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  return bytes;
}

/**
 * UUIDv7 (RFC 9562): 48-bit millisecond time, then a 12-bit counter that keeps ids created in
 * the same millisecond in creation order, then random bits. Sorting ids sorts by creation.
 */
export const uuidv7: IdGenerator = () => {
  let now = Date.now();
  if (now <= lastMillis) {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMillis += 1;
      sequence = 0;
    }
    now = lastMillis;
  } else {
    lastMillis = now;
    sequence = 0;
  }
  const bytes = nextRandom16();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
