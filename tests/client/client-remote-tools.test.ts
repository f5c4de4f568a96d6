import {
  NotFoundError,
  TenxgraphClient,
  isClientError,
  messageText,
  remoteToolCalls,
  toolResult,
  type StreamChunk,
} from "@tenxgraph/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { remoteToolGraph } from "../server/support/remote-tool-graph.js";
import { startTestServer, type TestServer } from "../server/support/test-server.js";
import { CLIENT_CASES } from "./support/client-server.js";

/** Our client's remote-tool loop against the real server (no auth, so setup is allowed). */
describe.each(CLIENT_CASES)("client remote tools on $label", ({ kind, transport }) => {
  let t: TestServer;
  let client: TenxgraphClient;
  beforeAll(async () => {
    t = await startTestServer(kind, `client_remote_${kind}_${transport.id}`, {
      auth: null,
      build: remoteToolGraph,
    });
    client = new TenxgraphClient({ baseUrl: t.base, ...transport.options });
  });
  afterAll(() => t.close());

  it("sets up a tool, runs it for the graph from invoke and from a stream", async () => {
    const setup = await client.setupRemoteTools([
      { nodeName: "TOOL", name: "get_location", description: "Where the user is." },
    ]);
    expect(setup.registered_tools).toEqual([{ node_name: "TOOL", name: "get_location" }]);
    await expect(
      client.setupRemoteTools([{ nodeName: "GONE", name: "get_location" }]),
    ).rejects.toBeInstanceOf(NotFoundError);

    const threadId = `client-remote-${kind}`;
    const first = await client.invoke("use get_location", { threadId });
    expect(first.meta.status).toBe("interrupted");
    const calls = remoteToolCalls(first.messages);
    expect(calls).toEqual([{ id: "call_1", name: "get_location", args: { n: 1 } }]);
    const done = await client.invoke(
      calls.map((c) => toolResult(c.id, `Berlin for ${c.args.n}`)),
      { threadId },
    );
    expect(done.meta.status).toBe("completed");
    expect(messageText(done.messages.at(-1)!)).toBe("results: Berlin for 1");
    await expect(client.invoke([toolResult("call_1", "again")], { threadId })).rejects.toSatisfy(
      (e) => isClientError(e, "REMOTE_TOOL_NOT_PENDING") && e.status === 409,
    );

    const streamed = `client-remote-stream-${kind}`;
    const chunks: StreamChunk[] = [];
    for await (const chunk of client.stream("use get_location", { threadId: streamed }))
      chunks.push(chunk);
    const asked = remoteToolCalls(chunks.map((c) => c.message));
    expect(asked.map((c) => c.id)).toEqual(["call_1"]);
    const answered: StreamChunk[] = [];
    for await (const chunk of client.stream([toolResult("call_1", "failed", { isError: true })], {
      threadId: streamed,
    }))
      answered.push(chunk);
    const last = answered.filter((c) => c.message?.role === "assistant").at(-1)!;
    expect(messageText(last.message!)).toBe("results: failed (failed)");
  });
});
