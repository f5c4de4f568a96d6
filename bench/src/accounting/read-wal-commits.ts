import { readFileSync } from "node:fs";

/** What a WAL file holds: its frames, how many of them end a transaction, and the page size. */
export interface WalCommits {
  commits: number;
  frames: number;
  pageSize: number;
}

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

/**
 * Counts the commits in a SQLite WAL file by reading its frames: a frame whose "database size
 * after commit" field is non-zero is the last frame of a committed transaction. Only frames
 * carrying the header's salt count, so frames left over from before a WAL restart are ignored;
 * the caller keeps the WAL from restarting while it counts (see `account-store.ts`).
 */
export function readWalCommits(walPath: string): WalCommits {
  const wal = readFileSync(walPath);
  if (wal.length < WAL_HEADER_BYTES) return { commits: 0, frames: 0, pageSize: 0 };
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let commits = 0;
  let frames = 0;
  for (
    let at = WAL_HEADER_BYTES;
    at + FRAME_HEADER_BYTES + pageSize <= wal.length;
    at += FRAME_HEADER_BYTES + pageSize
  ) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    frames++;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return { commits, frames, pageSize };
}
