/**
 * examples/tracing/support-agent-traced.ts sends its spans over OTLP/HTTP to a collector: here a
 * small HTTP server standing in for one, which keeps what it received.
 */
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = fileURLToPath(new URL("node_modules/.bin/tsx", `file://${root}`));

/** A span as OTLP/JSON carries it (the fields read here). */
interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  attributes: { key: string; value: { stringValue?: string } }[];
  links?: { traceId: string; spanId: string }[];
}

describe("examples/tracing: the support agent over OTLP", () => {
  const received: OtlpSpan[] = [];
  let collector: Server;

  beforeAll(async () => {
    collector = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        expect(request.url).toBe("/v1/traces");
        const sent = JSON.parse(body) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const resource of sent.resourceSpans)
          for (const scope of resource.scopeSpans) received.push(...scope.spans);
        response.setHeader("content-type", "application/json");
        response.end("{}");
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  });

  afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())));

  it("sends both runs' spans; the continued run replays the calls and links to the crashed one", async () => {
    const { port } = collector.address() as AddressInfo;
    const { stdout } = await promisify(execFile)(
      tsx,
      ["examples/tracing/support-agent-traced.ts"],
      {
        cwd: root,
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
        timeout: 60_000,
      },
    );
    expect(stdout).toContain("crashed: worker killed");
    expect(stdout).toContain("status: completed");
    const outcome = (span: OtlpSpan) =>
      span.attributes.find((a) => a.key === "tenxgraph.tool.outcome")?.value.stringValue;
    const runs = received.filter((span) => span.name === "invoke_agent support");
    expect(runs).toHaveLength(2);
    const [crashed, continued] = runs;
    const tools = (run: OtlpSpan) =>
      received
        .filter((span) => span.traceId === run.traceId && span.name.startsWith("execute_tool"))
        .map((span) => [span.name, outcome(span)])
        .sort(([a], [b]) => String(a).localeCompare(String(b)));
    expect(tools(crashed!)).toEqual([
      ["execute_tool charge_card", "ran"],
      ["execute_tool lookup_order", "ran"],
      ["execute_tool send_receipt", "ran"],
    ]);
    expect(tools(continued!)).toEqual([
      ["execute_tool charge_card", "replayed"],
      ["execute_tool lookup_order", "replayed"],
      ["execute_tool send_receipt", "replayed"],
    ]);
    expect(continued!.links).toMatchObject([
      { traceId: crashed!.traceId, spanId: crashed!.spanId },
    ]);
  }, 60_000);
});
