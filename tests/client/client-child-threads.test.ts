import { NotFoundError, PermissionDeniedError, type TenxgraphClient } from "@tenxgraph/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTeamGraph } from "../support/team-graph.js";
import { CLIENT_CASES, startClientServer, type ClientTestServer } from "./support/client-server.js";

/** The client against a real server whose graph runs a WORKER subgraph, on each store. */
describe.each(CLIENT_CASES)("client child threads on $label", ({ kind, transport }) => {
  let t: ClientTestServer;
  let alice: TenxgraphClient;
  const parent = `team-${kind}`;
  const child = `${parent}|WORKER@0`;
  beforeAll(async () => {
    t = await startClientServer(kind, `client_children_${kind}`, {
      transport,
      build: (checkpointer, charges) => buildTeamGraph(checkpointer, (id) => charges.push(id)),
    });
    alice = await t.clientFor("alice");
    await alice.invoke("charge 5", { threadId: parent });
  });
  afterAll(() => t.close());

  it("lists a thread's child threads, and reads the child's ledger by its id", async () => {
    const children = await alice.listChildThreads(parent);
    expect(children).toEqual([
      expect.objectContaining({ thread_id: child, parent_thread_id: parent, user_id: "alice" }),
    ]);
    expect(await alice.listChildThreads(parent, { offset: 1 })).toEqual([]);
    expect(await alice.listChildThreads(child)).toEqual([]);
    expect((await alice.getThread(child))?.parent_thread_id).toBe(parent);
    const ledger = await alice.getLedger(child);
    expect(ledger.map((e) => [e.tool_name, e.status])).toEqual([["charge_card", "completed"]]);
    expect(t.charges).toEqual(["5"]);
  });

  it("throws NotFoundError for an unknown thread and PermissionDeniedError for another user's", async () => {
    await expect(alice.listChildThreads("no-such-thread")).rejects.toBeInstanceOf(NotFoundError);
    const bob = await t.clientFor("bob");
    await expect(bob.listChildThreads(parent)).rejects.toBeInstanceOf(PermissionDeniedError);
  });
});
