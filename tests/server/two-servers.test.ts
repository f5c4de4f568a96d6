import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { readEffects } from "../support/effect-log.js";
import { dropStore, freshStore } from "../support/fresh-store.js";
import { caller, isErrorEnvelope, userMessage } from "./support/http.js";
import {
  startServerProcess,
  stopServerProcess,
  type ServerProcess,
} from "./support/server-workers.js";
import type { Effect } from "./support/test-graph.js";

/** The thread's committed version as the server reports it. */
async function versionOf(call: ReturnType<typeof caller>, threadId: string): Promise<number> {
  const state = (await call("GET", `/v1/threads/${threadId}/state`)).body.data.state;
  return state?.execution_meta.internal_data.version ?? 0;
}

describe("two server processes on one PostgreSQL (Redis in front)", () => {
  const dir = mkdtempSync(join(tmpdir(), "tenxgraph-two-servers-"));
  const spec = freshStore("postgres", "two_servers", dir);
  const effectLog = join(dir, "effects.jsonl");
  const gate = join(dir, "gate");
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    await Promise.all(servers.map(stopServerProcess));
    await dropStore(spec);
    rmSync(dir, { recursive: true, force: true });
  });

  it("serve turns on one thread: one wins, the other gets 409, and no update is lost", async () => {
    // The model waits at a gate, so both turns are provably under way before either commits.
    const [a, b] = await Promise.all([
      startServerProcess({ store: spec, effectLog, gateFile: gate }),
      startServerProcess({ store: spec, effectLog, gateFile: gate }),
    ]);
    servers.push(a!, b!);
    const onA = caller(a!.base);
    const onB = caller(b!.base);
    const first = onA("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 1")],
      config: { thread_id: "shared" },
    });
    while ((await versionOf(onB, "shared")) === 0) await sleep(20);
    const started = await versionOf(onB, "shared");
    const second = onB("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 2")],
      config: { thread_id: "shared" },
    });
    // The second turn's start write is in: the first turn's next write is now stale.
    while ((await versionOf(onA, "shared")) === started) await sleep(20);
    writeFileSync(gate, "");
    const [lost, won] = await Promise.all([first, second]);

    expect(lost.status).toBe(409);
    expect(isErrorEnvelope(lost.body)).toBe(true);
    expect(lost.body.error.code).toBe("STORAGE_CONFLICT_001");
    expect(won.status).toBe(200);
    expect(won.body.data.meta.status).toBe("completed");
    const transcript = (await onA("GET", "/v1/threads/shared/messages")).body.data.messages;
    const said = transcript
      .filter((m: { role: string }) => m.role === "user")
      .map((m: { content: { text: string }[] }) => m.content[0]!.text);
    expect(said).toEqual(["charge order 1", "charge order 2"]);
    const charges = readEffects<Effect>(effectLog).filter((e) => e.line.includes("charged"));
    expect(charges.map((e) => e.line)).toEqual([
      "payment provider: charged order 2 (key order-2-charge)",
    ]);
  }, 120_000);

  it("stop reaches a run on the other process", async () => {
    const closed = join(dir, "gate-never-opened");
    const [a, b] = await Promise.all([
      startServerProcess({ store: spec, effectLog, gateFile: closed }),
      startServerProcess({ store: spec, effectLog, gateFile: closed }),
    ]);
    servers.push(a!, b!);
    const onA = caller(a!.base);
    const onB = caller(b!.base);
    const running = onA("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge order 3")],
      config: { thread_id: "stop-me" },
    });
    while ((await versionOf(onB, "stop-me")) === 0) await sleep(20);
    const stop = await onB("POST", "/v1/graph/stop", { thread_id: "stop-me" });
    expect(stop.body.data).toMatchObject({ ok: true, running: true, status: "stop_requested" });
    const result = await running;
    expect(result.status).toBe(200);
    expect(result.body.data.meta.status).toBe("stopped");
    const state = (await onB("GET", "/v1/threads/stop-me/state")).body.data.state;
    expect(state.execution_meta.internal_data.status).toBe("stopped");
  }, 120_000);
});
