import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readEffects } from "../support/effect-log.js";
import { dropStore, freshStore, waitUntilUnlocked } from "../support/fresh-store.js";
import { openStore, STORES } from "../support/store-spec.js";
import { ndjson, userMessage } from "./support/http.js";
import { startServerProcess, stopServerProcess } from "./support/server-workers.js";
import type { Effect } from "./support/test-graph.js";

/** Reads an NDJSON response line by line until `stop` says so; returns the chunks read. */
async function readUntil(
  response: Response,
  stop: (chunk: { data?: { status?: string; tool_name?: string } }) => boolean,
) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const chunks: Record<string, unknown>[] = [];
  let buffered = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done)
      throw new Error(`stream ended before the awaited chunk: ${JSON.stringify(chunks.slice(-3))}`);
    buffered += decoder.decode(value, { stream: true });
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const chunk = JSON.parse(line) as Record<string, unknown>;
      chunks.push(chunk);
      if (stop(chunk)) return chunks;
    }
  }
}

describe.each(STORES)("a server SIGKILLed mid-stream, on $label", ({ kind }) => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-server-crash-"));
  const spec = freshStore(kind, `server_crash_${kind}`, dir);
  const effectLog = join(dir, "effects.jsonl");
  afterAll(async () => {
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  it("is continued by the next request from the ledger: recorded calls replay, none runs twice", async () => {
    // The mailer hangs in the first server: it dies with send_receipt claimed, not recorded.
    const first = await startServerProcess({ store: spec, effectLog, mailerDelayMs: 600_000 });
    const response = await fetch(`${first.base}/v1/graph/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/x-ndjson" },
      body: JSON.stringify({
        messages: [userMessage("charge order 4821")],
        config: { thread_id: "crash" },
        response_granularity: "full",
      }),
    });
    expect(response.status).toBe(200);
    await readUntil(
      response,
      (c) => c.data?.status === "tool_completed" && c.data.tool_name === "charge_card",
    );
    await first.worker.kill();
    await waitUntilUnlocked(spec);
    const charges = () =>
      readEffects<Effect>(effectLog).filter((e) => /charged order 4821/.test(e.line));
    expect(charges()).toHaveLength(1);

    const second = await startServerProcess({ store: spec, effectLog });
    try {
      const r = await fetch(`${second.base}/v1/graph/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          continue: true,
          config: { thread_id: "crash" },
          response_granularity: "full",
        }),
      });
      const chunks = ndjson(await r.text());
      const results = chunks.filter((c) => c.data?.status === "tool_completed");
      const replayed = Object.fromEntries(results.map((c) => [c.data.tool_name, c.data.replayed]));
      expect(replayed).toEqual({ lookup_order: true, charge_card: true, send_receipt: false });
      expect(chunks.at(-1).data).toMatchObject({
        status: "graph_invoked",
        run_status: "completed",
      });
      const answer = chunks
        .filter((c) => c.event === "message" && c.message.role === "assistant")
        .at(-1);
      expect(answer.message.content[0].text).toBe(
        "Order 4821 is charged and the receipt is on its way.",
      );
      expect(charges()).toHaveLength(1);
      expect(charges()[0]!.pid).toBe(first.worker.child.pid);
      expect(
        readEffects<Effect>(effectLog).filter((e) => /receipt for order 4821/.test(e.line)),
      ).toHaveLength(1);
    } finally {
      await stopServerProcess(second);
    }
    const store = openStore(spec);
    try {
      const ledger = await store.listCalls("crash");
      expect(ledger.map((e) => `${e.toolName}:${e.status}`).sort()).toEqual([
        "charge_card:completed",
        "lookup_order:completed",
        "send_receipt:completed",
      ]);
      expect(ledger.find((e) => e.toolName === "charge_card")!.attempt).toBe(1);
      expect((await store.getCheckpoint("crash"))!.status).toBe("completed");
    } finally {
      await store.close();
    }
  }, 120_000);
});
