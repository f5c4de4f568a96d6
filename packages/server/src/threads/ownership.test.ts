import { END, InMemoryCheckpointer, Message, StateGraph } from "@tenxgraph/core";
import type { Checkpointer } from "@tenxgraph/core/storage";
import { beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../http/server-env.js";
import { grantedRead, grantThread } from "./ownership.js";

const alice: AuthUser = { id: "alice", claims: {}, authenticated: true };
const bob: AuthUser = { id: "bob", claims: {}, authenticated: true };

/** The store, counting its reads of a thread. */
const store = new InMemoryCheckpointer();
let reads = 0;
const counted = new Proxy(store, {
  get(target, key, receiver) {
    if (key === "getCheckpoint" || key === "getCheckpointAndStops") reads++;
    const value: unknown = Reflect.get(target, key, receiver);
    return typeof value === "function" ? (value as () => unknown).bind(target) : value;
  },
}) as Checkpointer;

beforeAll(async () => {
  const graph = new StateGraph()
    .addNode("reply", () => Message.assistant("hi"))
    .addEdge("reply", END)
    .setEntryPoint("reply")
    .compile({ checkpointer: store });
  for (const threadId of ["alice-1", "alice-2"])
    await graph.invoke({ messages: [Message.user("hello")] }, { threadId, userId: "alice" });
});

describe("thread grants", () => {
  it("grants the owner, and a thread nobody has yet, with the thread as read for the check", async () => {
    const grant = await grantThread(counted, alice, "alice-1", "run on");
    expect(grant.read).toMatchObject({ checkpoint: { userId: "alice" }, stopRequests: 0 });
    await store.requestStop("new-thread");
    expect((await grantThread(counted, bob, "new-thread", "run on")).read).toEqual({
      checkpoint: null,
      stopRequests: 1,
    });
    await expect(grantThread(counted, bob, "alice-1", "run on")).rejects.toMatchObject({
      status: 403,
      code: "PERMISSION_DENIED",
    });
  });

  it("stands in for the check only for its own user, thread and action", async () => {
    const grant = await grantThread(counted, alice, "alice-1", "run on");
    reads = 0;
    expect(await grantedRead(counted, alice, "alice-1", "run on", grant)).toBe(grant.read);
    expect(reads).toBe(0);
    // Handed to another user: checked again, and refused.
    await expect(grantedRead(counted, bob, "alice-1", "run on", grant)).rejects.toMatchObject({
      status: 403,
    });
    // For another thread (a minted id, another path): that thread is read.
    const other = await grantedRead(counted, alice, "alice-2", "run on", grant);
    expect(other.checkpoint?.threadId).toBe("alice-2");
    // For another action: checked again.
    const bobs = await grantThread(counted, bob, "bob-new", "read");
    reads = 0;
    await grantedRead(counted, bob, "bob-new", "run on", bobs);
    expect(reads).toBe(1);
  });
});
