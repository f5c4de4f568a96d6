import {
  AuthenticationError,
  ConnectionError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  TenxgraphClient,
  ValidationError,
  isClientError,
  messageText,
} from "@tenxgraph/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenFor } from "../server/support/http.js";
import {
  CLIENT_CASES,
  TRANSPORTS,
  startClientServer,
  type ClientTestServer,
} from "./support/client-server.js";

/** The client against the real server on 127.0.0.1, on each store: threads, state, messages, errors. */
describe.each(CLIENT_CASES)("client threads and errors on $label", ({ kind, transport }) => {
  let t: ClientTestServer;
  let alice: TenxgraphClient;
  const threadId = `thread-${kind}`;
  beforeAll(async () => {
    t = await startClientServer(kind, `client_threads_${kind}`, {
      transport,
      maxBodyBytes: 64 * 1024,
    });
    alice = await t.clientFor("alice");
    await alice.invoke("charge 12", { threadId });
  });
  afterAll(() => t.close());

  it("lists and reads threads, reads and edits state, pages and appends messages, reads the ledger", async () => {
    const threads = await alice.listThreads();
    expect(threads).toEqual([expect.objectContaining({ thread_id: threadId, user_id: "alice" })]);
    expect(await alice.listThreads({ search: "nothing-like-it" })).toEqual([]);
    expect((await alice.getThread(threadId))?.metadata.status).toBe("completed");
    expect(await alice.getThread("no-such-thread")).toBeNull();

    const messages = await alice.listMessages(threadId);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    const page = await alice.listMessages(threadId, { offset: 1, limit: 2 });
    expect(page.map((m) => m.message_id)).toEqual(messages.slice(1, 3).map((m) => m.message_id));
    expect(await alice.listMessages(threadId, { search: "CHARGED ORDER" })).toHaveLength(2);
    const one = await alice.getMessage(threadId, messages[0]!.message_id);
    expect(messageText(one)).toBe("charge 12");

    const added = await alice.addMessages(threadId, "a note from support");
    expect(added.data.message_ids).toHaveLength(1);
    expect(messageText((await alice.listMessages(threadId)).at(-1)!)).toBe("a note from support");

    const state = await alice.updateState(threadId, { plan: { tier: "gold", seats: 2 } });
    expect(state.plan).toEqual({ tier: "gold", seats: 2 });
    const merged = await alice.updateState(threadId, { plan: { seats: 3, tier: null } });
    expect(merged.plan).toEqual({ tier: "gold", seats: 3 });
    expect((await alice.getState(threadId))?.context).toHaveLength(5);
    const cleared = await alice.clearState(threadId);
    expect(cleared.success).toBe(true);
    const after = await alice.getState(threadId);
    expect(after?.plan).toBeUndefined();
    expect(after?.context).toHaveLength(5);

    const ledger = await alice.getLedger(threadId);
    expect(ledger).toEqual([
      expect.objectContaining({
        key: "charge_card:order-12-charge",
        tool_name: "charge_card",
        status: "completed",
        attempt: 1,
      }),
    ]);
    expect(await alice.listInDoubt(threadId)).toEqual([]);
  });

  it("deletes a thread: it is gone from the list and its state reads null", async () => {
    await alice.invoke("hello", { threadId: `doomed-${kind}` });
    const deleted = await alice.deleteThread(`doomed-${kind}`);
    expect(deleted).toMatchObject({ success: true, data: { thread_id: `doomed-${kind}` } });
    expect(await alice.getState(`doomed-${kind}`)).toBeNull();
    expect((await alice.listThreads()).map((x) => x.thread_id)).toEqual([threadId]);
  });

  it("throws 401 without a token or with a bad one; a token function is asked on every request", async () => {
    const anonymous = new TenxgraphClient({ baseUrl: t.url, ...transport.options });
    expect(await anonymous.ping()).toBe("pong");
    const missing = await anonymous.listThreads().catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(AuthenticationError);
    expect(missing).toMatchObject({ status: 401, code: "MISSING_TOKEN" });
    const forged = new TenxgraphClient({
      baseUrl: t.url,
      ...transport.options,
      token: await tokenFor("alice", { secret: "not-the-server-secret" }),
    });
    expect(await forged.getThread(threadId).catch((e: unknown) => e)).toMatchObject({
      status: 401,
      code: "INVALID_TOKEN",
    });
    const expired = await tokenFor("alice", { expired: true });
    let asked = 0;
    const rotating = new TenxgraphClient({
      baseUrl: t.url,
      ...transport.options,
      token: async () => (++asked === 1 ? expired : tokenFor("alice")),
    });
    const first = await rotating.getThread(threadId).catch((e: unknown) => e);
    expect(isClientError(first, "EXPIRED_TOKEN")).toBe(true);
    expect((await rotating.getThread(threadId))?.thread_id).toBe(threadId);
    expect(asked).toBe(2);
  });

  it("throws 403 on another user's thread, for reads, runs and stops alike", async () => {
    const bob = await t.clientFor("bob");
    for (const attempt of [
      () => bob.getState(threadId),
      () => bob.invoke("charge 13", { threadId }),
      () => bob.stream("hi", { threadId }).toArray(),
      () => bob.stop(threadId),
      () => bob.getLedger(threadId),
      () => bob.deleteThread(threadId),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PermissionDeniedError);
      expect(error).toMatchObject({ status: 403, code: "PERMISSION_DENIED" });
    }
    expect(await bob.listThreads()).toEqual([]);
    expect((await alice.getThread(threadId))?.thread_id).toBe(threadId);
  });

  it("throws 404, 409, 413 and 422 with the server's code, details and request id", async () => {
    const missing = await alice.getMessage(threadId, "no-such-message").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: "NOT_FOUND" });
    expect(
      isClientError(
        await alice.listInDoubt("no-such-thread").catch((e: unknown) => e),
        "NOT_FOUND",
      ),
    ).toBe(true);

    const [first] = await alice.listMessages(threadId, { limit: 1 });
    await alice.deleteMessage(threadId, first!.message_id);
    const deletedTwice = await alice.deleteMessage(threadId, first!.message_id).catch((e) => e);
    expect(deletedTwice).toBeInstanceOf(NotFoundError);

    const huge = await alice.invoke("x".repeat(100 * 1024)).catch((e: unknown) => e);
    expect(huge).toBeInstanceOf(PayloadTooLargeError);
    expect(huge).toMatchObject({ status: 413, code: "REQUEST_TOO_LARGE" });

    const empty = await alice.invoke([]).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(ValidationError);
    expect(empty).toMatchObject({ status: 422, code: "VALIDATION_ERROR" });
    expect((empty as ValidationError).details[0]?.loc).toEqual(["body", "messages"]);
    expect((empty as ValidationError).requestId).toMatch(/^[0-9a-f-]{36}$/);
    const idle = await alice.resume(threadId, "yes").catch((e: unknown) => e);
    expect(isClientError(idle, "RESUME_003")).toBe(true);
  });
});

describe.each(TRANSPORTS)("client without a server, over $label", (transport) => {
  it("throws CONNECTION_FAILED (status 0) when nothing answers", async () => {
    const closed = await startClientServer("sqlite", "client_closed", { transport });
    const url = closed.url;
    await closed.close();
    const client = new TenxgraphClient({ baseUrl: url, ...transport.options });
    const error = await client.ping().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ status: 0, code: "CONNECTION_FAILED" });
  });
});
