/**
 * The step function computes a child version's transcript in PL/pgSQL (`childRanges` of
 * `@tenxgraph/core/storage`, which the in-memory store uses). Beyond the conformance cases,
 * random histories of appends, forks, edits, removals, re-sent messages and prunings are
 * written to both stores: every version must hold the same transcript in both, and every write
 * one refuses the other must refuse too.
 */
import { randomUUID } from "node:crypto";
import { InMemoryCheckpointer, Message, isTenxgraphError } from "@tenxgraph/core";
import type { Checkpointer, CheckpointWrite, SeqRanges } from "@tenxgraph/core/storage";
import { prefixRanges, rangeSeqs, seqsToRanges } from "@tenxgraph/core/storage";
import type { PgCheckpointer } from "@tenxgraph/postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { testPostgresDsn } from "@tenxgraph/test-servers/vitest";
import { sql } from "../support/pg-inspect.js";
import { dropSchema, freshSchema, sharedStore } from "../support/pg-store.js";

const schema = freshSchema("transcript_agreement");
const store: PgCheckpointer = sharedStore(schema, { redis: false });

afterAll(async () => {
  await store.close();
  await dropSchema(testPostgresDsn(), schema);
});

/** A small seeded generator (mulberry32), so a failing history can be replayed by its seed. */
function random(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

/** What a write did to a store: its new version, or the code of the error that refused it. */
async function outcome(checkpointer: Checkpointer, write: CheckpointWrite) {
  try {
    return { version: await checkpointer.putCheckpoint(write) };
  } catch (error) {
    return { refused: isTenxgraphError(error) ? error.code : String(error) };
  }
}

/** The write that creates the thread, whose fields later writes keep. */
function created(threadId: string): CheckpointWrite {
  return {
    threadId,
    incarnation: "life",
    userId: null,
    expectedVersion: 0,
    step: 1,
    currentNode: "MAIN",
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
  };
}

/** The next write of a random history, built from what the reference store holds. */
async function nextWrite(
  reference: Checkpointer,
  threadId: string,
  head: number,
  pick: (below: number) => number,
  seen: Message[],
): Promise<CheckpointWrite> {
  const kept = (await reference.listVersions(threadId)).map((v) => v.version);
  // Mostly the head; sometimes a fork of a kept version, rarely one that is not kept.
  const parentVersion = pick(3) > 0 ? head : pick(5) === 0 ? 1 : kept[pick(kept.length)]!;
  const parent = await reference.listMessages(threadId, { version: parentVersion });
  const fresh = Array.from({ length: pick(3) }, () => Message.user(`m-${randomUUID()}`));
  // A message the parent lacks but another version holds (or, rarely, one it holds).
  const again = seen.filter((m) => pick(8) === 0 || !parent.some((p) => p.id === m.id));
  const newMessages = [...fresh, ...(pick(4) === 0 && again.length > 0 ? [again[0]!] : [])];
  const edited = parent.filter(() => pick(5) === 0);
  const removed = parent.filter((m) => !edited.includes(m) && pick(6) === 0);
  seen.push(...fresh);
  return {
    ...created(threadId),
    expectedVersion: head,
    parentVersion,
    step: head + 1,
    newMessages,
    replacedMessages: edited.map((m) => ({ ...m, content: `${String(m.content)} (v${head + 1})` })),
    removedMessageIds: removed.map((m) => m.id),
  } as CheckpointWrite;
}

/** Every kept version's transcript, whole and in a random page. */
async function transcripts(
  checkpointer: Checkpointer,
  threadId: string,
  pages: [number, number][],
) {
  const versions = await checkpointer.listVersions(threadId);
  return Promise.all(
    versions.map(async ({ version, parentVersion, messageCount }, i) => {
      const [offset, limit] = pages[i % pages.length]!;
      const all = await checkpointer.listMessages(threadId, { version });
      const page = await checkpointer.listMessages(threadId, { version, offset, limit });
      const text = (messages: Message[]) => messages.map((m) => `${m.id}:${String(m.content)}`);
      return { version, parentVersion, messageCount, all: text(all), page: text(page) };
    }),
  );
}

/** Writes the histories had refused, in both stores alike. */
let refusedInAll = 0;

describe("PL/pgSQL transcripts and the in-memory store's", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`agree on every version of a random history (seed ${seed})`, async () => {
      const pick = random(seed);
      const reference = new InMemoryCheckpointer();
      const threadId = `agreement-${seed}-${randomUUID()}`;
      const seen: Message[] = [Message.user("first")];
      const first = { ...created(threadId), newMessages: [seen[0]!] };
      for (const checkpointer of [reference, store]) await checkpointer.putCheckpoint(first);
      let head = 1;
      for (let i = 0; i < 25; i++) {
        if (pick(10) === 0) {
          const keepLast = 1 + pick(4);
          const pruned = await reference.pruneVersions(threadId, { keepLast });
          expect(await store.pruneVersions(threadId, { keepLast })).toBe(pruned);
          continue;
        }
        const write = await nextWrite(reference, threadId, head, pick, seen);
        const expected = await outcome(reference, write);
        expect(await outcome(store, write), `write ${i}`).toEqual(expected);
        if (expected.version) head = expected.version;
        else refusedInAll++;
      }
      const pages: [number, number][] = [
        [pick(3), 1 + pick(4)],
        [pick(6), 2],
      ];
      expect(await transcripts(store, threadId, pages)).toEqual(
        await transcripts(reference, threadId, pages),
      );
      // A history mostly refused would test the checks alone.
      expect(head).toBeGreaterThan(5);
    });
  }

  it("expands and merges ranges in SQL as rangeSeqs and seqsToRanges do in TypeScript", async () => {
    await store.setup();
    const s = pg.escapeIdentifier(schema);
    const pick = random(7);
    for (let i = 0; i < 20; i++) {
      // Runs of rows in a shuffled order, as edits and forks leave them.
      const runs = Array.from({ length: pick(5) }, () => {
        const start = pick(40);
        return Array.from({ length: 1 + pick(4) }, (_, k) => start + k);
      });
      const seqs = [...new Set(runs.sort(() => pick(3) - 1).flat())];
      const ranges = seqsToRanges(seqs);
      const [merged] = await sql<{ ranges: SeqRanges }>(
        testPostgresDsn(),
        `SELECT ${s}.tenxgraph_seq_ranges($1::integer[]) AS ranges`,
        [seqs],
      );
      expect(merged!.ranges, `seqs ${JSON.stringify(seqs)}`).toEqual(ranges);
      const expanded = await sql<{ seq: number }>(
        testPostgresDsn(),
        `SELECT seq FROM ${s}.tenxgraph_transcript_seqs($1::jsonb, 0) ORDER BY pos`,
        [JSON.stringify(ranges)],
      );
      expect(expanded.map((row) => row.seq)).toEqual(rangeSeqs(ranges));
    }
    // NULL stands for the prefix of the given length.
    const prefix = await sql<{ seq: number }>(
      testPostgresDsn(),
      `SELECT seq FROM ${s}.tenxgraph_transcript_seqs(NULL, 5) ORDER BY pos`,
    );
    expect(prefix.map((row) => row.seq)).toEqual(rangeSeqs(prefixRanges(5)));
  });

  it("refused some of those writes, as the reference did (so the checks were compared too)", () => {
    expect(refusedInAll).toBeGreaterThan(0);
  });
});
