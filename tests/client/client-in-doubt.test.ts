import { setTimeout as sleep } from "node:timers/promises";
import { NotFoundError, messageText, type TenxgraphClient } from "@tenxgraph/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_CASES, startClientServer, type ClientTestServer } from "./support/client-server.js";

/**
 * In-doubt calls through the client: a charge claimed by a run that died (the claim written to
 * the real store, its heartbeat left to go stale) is asked about, listed, and decided over HTTP.
 */
describe.each(CLIENT_CASES)("client in-doubt decisions on $label", ({ kind, transport }) => {
  let t: ClientTestServer;
  let client: TenxgraphClient;
  beforeAll(async () => {
    t = await startClientServer(kind, `client_in_doubt_${kind}`, { transport });
    client = await t.clientFor("alice");
  });
  afterAll(() => t.close());

  /** A thread of alice's whose charge of `order` was claimed by a run that is gone. */
  async function deadClaim(threadId: string, order: string): Promise<void> {
    await client.addMessages(threadId, "hello");
    const [claim] = await t.checkpointer.claimCalls(threadId, [
      {
        key: `charge_card:order-${order}-charge`,
        toolName: "charge_card",
        ownerRunId: "run-of-a-killed-worker",
        expectedAttempt: 0,
        leaseMs: 200,
      },
    ]);
    expect(claim?.won).toBe(true);
    // Listed, not yet decidable: nobody asked. In doubt once its 200 ms lease has expired.
    for (;;) {
      const [call] = await client.listInDoubt(threadId);
      expect(call).toMatchObject({ key: `charge_card:order-${order}-charge`, decidable: false });
      if ((call!.lease_expires_in_ms ?? 0) < -200) break;
      await sleep(50);
    }
  }

  it("records the result a human confirms: the tool never runs again", async () => {
    const threadId = `complete-${kind}`;
    await deadClaim(threadId, "77");
    const asked = await client.invoke("charge 77", { threadId });
    expect(asked.meta.status).toBe("interrupted");
    expect(asked.meta.interrupts[0]!.value).toMatchObject({
      kind: "tool_in_doubt",
      tool: "charge_card",
      arguments: { order_id: "77" },
      key: "charge_card:order-77-charge",
    });
    const calls = await client.listInDoubt(threadId);
    expect(calls).toEqual([
      expect.objectContaining({
        key: "charge_card:order-77-charge",
        tool_name: "charge_card",
        decidable: true,
        interrupt_id: asked.meta.interrupts[0]!.id,
      }),
    ]);

    const decided = await client.decideInDoubt(threadId, "charge_card:order-77-charge", {
      action: "complete",
      result: "Charged order 77 (confirmed with the provider)",
    });
    expect(decided.meta.status).toBe("completed");
    expect(messageText(decided.messages.at(-1)!)).toBe(
      "Done: Charged order 77 (confirmed with the provider)",
    );
    expect(t.charges).not.toContain("77");
    expect(await client.listInDoubt(threadId)).toEqual([]);
    const [entry] = await client.getLedger(threadId);
    expect(entry).toMatchObject({
      key: "charge_card:order-77-charge",
      status: "completed",
      attempt: 2,
    });
  });

  it("retries on request: the tool runs once more; deciding again is a 404", async () => {
    const threadId = `retry-${kind}`;
    await deadClaim(threadId, "78");
    expect((await client.invoke("charge 78", { threadId })).meta.status).toBe("interrupted");
    const decided = await client.decideInDoubt(threadId, "charge_card:order-78-charge", {
      action: "retry",
    });
    expect(decided.meta.status).toBe("completed");
    expect(t.charges.filter((c) => c === "78")).toHaveLength(1);
    const again = await client
      .decideInDoubt(threadId, "charge_card:order-78-charge", { action: "retry" })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(NotFoundError);
  });

  it("fails on request: the model is told the charge failed", async () => {
    const threadId = `fail-${kind}`;
    await deadClaim(threadId, "79");
    await client.invoke("charge 79", { threadId });
    const decided = await client.decideInDoubt(threadId, "charge_card:order-79-charge", {
      action: "fail",
      reason: "the provider has no record",
    });
    expect(decided.meta.status).toBe("completed");
    const tool = decided.messages.find((m) => m.role === "tool")!;
    expect(tool.content[0]).toMatchObject({ type: "tool_result", is_error: true });
    expect(String(tool.content[0]!.output)).toContain("the provider has no record");
    expect(t.charges).not.toContain("79");
  });
});
