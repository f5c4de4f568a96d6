import type { BaseState, CompiledGraph } from "@tenxgraph/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../support/store-spec.js";
import { buildTeamGraph } from "../support/team-graph.js";
import { caller, isErrorEnvelope, tokenFor, userMessage } from "./support/http.js";
import { startTestServer, type TestServer } from "./support/test-server.js";
import { until } from "../support/until.js";

/**
 * Over real HTTP on each store: a supervisor's thread lists the child thread its WORKER subgraph
 * ran on, and every thread route reads the child by its URL-encoded id (it holds '|' and '@').
 */
/** A charge that never returns: its call is left in doubt when its run is stopped. */
const hung = new Promise<void>(() => {});

describe.each(STORES)("child threads on $label", ({ kind }) => {
  let t: TestServer;
  let call: ReturnType<typeof caller>;
  const parent = `team-${kind}`;
  const child = `${parent}|WORKER@0`;
  const childPath = `/v1/threads/${encodeURIComponent(child)}`;
  beforeAll(async () => {
    t = await startTestServer(kind, `child_threads_${kind}`, {
      build: (checkpointer) =>
        buildTeamGraph(checkpointer, (order) => (order === "hang" ? hung : undefined), {
          onInDoubt: "interrupt",
          claimStaleAfterMs: 400,
          stopPollIntervalMs: 200,
        }) as unknown as CompiledGraph<BaseState>,
    });
    call = caller(t.base, await tokenFor("alice"));
    const seeded = await call("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge 7")],
      config: { thread_id: parent },
    });
    expect(seeded.status).toBe(200);
  });
  afterAll(() => t.close());

  it("lists a thread's child threads, paged, each with its parent", async () => {
    const children = await call("GET", `/v1/threads/${parent}/children`);
    expect(children.body.data.threads).toEqual([
      expect.objectContaining({
        thread_id: child,
        parent_thread_id: parent,
        user_id: "alice",
        metadata: expect.objectContaining({ status: "completed" }),
      }),
    ]);
    expect(
      (await call("GET", `/v1/threads/${parent}/children?offset=1`)).body.data.threads,
    ).toEqual([]);
    expect((await call("GET", `/v1/threads/${parent}/children?limit=0`)).status).toBe(422);
    expect((await call("GET", `${childPath}/children`)).body.data.threads).toEqual([]);
    // The listing of top-level threads shows the parent only, with no parent of its own.
    const top = (await call("GET", "/v1/threads")).body.data.threads;
    expect(top).toEqual([expect.objectContaining({ thread_id: parent, parent_thread_id: null })]);
  });

  it("reads the child by its encoded id: details, state, messages, ledger, history", async () => {
    const details = (await call("GET", childPath)).body.data.thread_data.thread;
    expect(details).toMatchObject({ thread_id: child, parent_thread_id: parent });
    const state = (await call("GET", `${childPath}/state`)).body.data.state;
    expect(state.execution_meta.internal_data.status).toBe("completed");
    const messages = (await call("GET", `${childPath}/messages`)).body.data.messages;
    expect(messages.at(-1).content[0].text).toBe("Done: Charged order 7");
    const ledger = (await call("GET", `${childPath}/ledger`)).body.data.entries;
    expect(ledger).toEqual([
      expect.objectContaining({
        key: "charge_card:order-7-charge",
        tool_name: "charge_card",
        status: "completed",
      }),
    ]);
    const history = await call("GET", `${childPath}/history`);
    expect(history.status).toBe(200);
    // The parent's own ledger is empty: its worker's calls are the child's.
    expect((await call("GET", `/v1/threads/${parent}/ledger`)).body.data.entries).toEqual([]);
  });

  it("refuses to run, edit or decide on a child thread on its own (409 SUBGRAPH_THREAD), writing nothing", async () => {
    const version = async () =>
      (await call("GET", childPath)).body.data.thread_data.thread.metadata.version as number;
    const before = await version();
    const refused = [
      await call("POST", "/v1/graph/invoke", {
        messages: [],
        continue: true,
        config: { thread_id: child },
      }),
      await call("POST", "/v1/graph/invoke", {
        messages: [userMessage("charge 8")],
        config: { thread_id: child },
      }),
      await call("POST", `${childPath}/state/update`, { values: {} }),
      await call("POST", `${childPath}/messages`, { messages: [userMessage("charge 9")] }),
      await call("PUT", `${childPath}/state`, { state: { note: "edited alone" } }),
      await call("DELETE", `${childPath}/state`),
      await call("POST", `${childPath}/in-doubt/charge_card:order-7-charge`, { action: "retry" }),
    ];
    for (const answer of refused) {
      expect(answer.status).toBe(409);
      expect(answer.body.error.code).toBe("SUBGRAPH_THREAD");
      expect(answer.body.error.message).toContain(`run or edit '${parent}' instead`);
    }
    expect(await version()).toBe(before);
    const state = (await call("GET", `${childPath}/state`)).body.data.state;
    expect(state.execution_meta.internal_data.status).toBe("completed");
  });

  it("answers 404 for an unknown thread and 403 for another user's", async () => {
    const unknown = await call("GET", "/v1/threads/unknown/children");
    expect(unknown.status).toBe(404);
    expect(isErrorEnvelope(unknown.body)).toBe(true);
    const bob = caller(t.base, await tokenFor("bob"));
    expect((await bob("GET", `/v1/threads/${parent}/children`)).status).toBe(403);
    expect((await bob("GET", childPath)).status).toBe(403);
  });

  it("refuses an in-doubt decision on a child (409), leaving it waiting for its parent's", async () => {
    const doubted = `doubt-${kind}`;
    const doubtedChild = `/v1/threads/${encodeURIComponent(`${doubted}|WORKER@0`)}`;
    const running = call("POST", "/v1/graph/invoke", {
      messages: [userMessage("charge hang")],
      config: { thread_id: doubted },
    });
    await until(async () => {
      const ledger = await call("GET", `${doubtedChild}/ledger`);
      return ledger.status === 200 && ledger.body.data.entries.length > 0;
    }, "the hung call's ledger entry");
    expect((await call("POST", "/v1/graph/stop", { thread_id: doubted })).status).toBe(200);
    await running;
    const continued = await call("POST", "/v1/graph/invoke", {
      messages: [],
      continue: true,
      config: { thread_id: doubted },
    });
    expect(continued.status, continued.text).toBe(200);
    expect(continued.body.data.meta.status).toBe("interrupted");
    const before = (await call("GET", `${doubtedChild}/state`)).body.data.state;
    const asked = (await call("GET", `${doubtedChild}/in-doubt`)).body.data.calls;
    expect(asked).toEqual([expect.objectContaining({ key: "charge_card:order-hang-charge" })]);
    const refused = await call("POST", `${doubtedChild}/in-doubt/charge_card:order-hang-charge`, {
      action: "fail",
    });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.error.code).toBe("SUBGRAPH_THREAD");
    expect((await call("GET", `${doubtedChild}/state`)).body.data.state).toEqual(before);
  });
});
