import { ROOT_CONTEXT } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { END } from "../definition/edges.js";
import { StateGraph } from "../graph/state-graph.js";
import { InMemoryCheckpointer } from "../storage/in-memory-checkpointer.js";
import { recordingLogger } from "../support/helpers.js";
import {
  DEFAULT_NODE_TIMEOUT_SECONDS,
  DEFAULT_RECURSION_LIMIT,
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  resolveRunConfig,
  resolveTimeout,
  type RunConfig,
} from "./run-config.js";

let counter = 0;
const ids = () => `generated-${++counter}`;

function resolve(config: RunConfig) {
  const logger = recordingLogger();
  return { resolved: resolveRunConfig({ threadId: "t", ...config }, logger, ids), logger };
}

describe("defaults", () => {
  it("are 900 s per node, 300 s per tool, 25 steps, durable writes every step", () => {
    expect(DEFAULT_NODE_TIMEOUT_SECONDS).toBe(900);
    expect(DEFAULT_TOOL_TIMEOUT_SECONDS).toBe(300);
    expect(DEFAULT_RECURSION_LIMIT).toBe(25);
    const { resolved, logger } = resolve({});
    expect(resolved).toEqual({
      threadId: "t",
      userId: null,
      nodeTimeoutMs: 900_000,
      toolTimeoutMs: 300_000,
      recursionLimit: 25,
      durableCheckpointEveryStep: true,
      signal: undefined,
      remoteTools: [],
      loadedThread: undefined,
      // No context is active outside a run: the run's span is a root.
      traceParent: ROOT_CONTEXT,
      graphId: null,
      fromVersion: null,
      breakpoints: { before: [], after: [] },
      parentThreadId: null,
    });
    expect(logger.records).toEqual([]);
  });

  it("keep the node deadline above the default model request timeout (600 s)", () => {
    expect(DEFAULT_NODE_TIMEOUT_SECONDS).toBeGreaterThan(600);
  });

  it("pass userId, durableCheckpointEveryStep and signal through", () => {
    const signal = new AbortController().signal;
    const { resolved } = resolve({ userId: "u1", durableCheckpointEveryStep: false, signal });
    expect(resolved).toMatchObject({ userId: "u1", durableCheckpointEveryStep: false });
    expect(resolved.signal).toBe(signal);
  });
});

describe("timeouts", () => {
  it("convert seconds to milliseconds, fractions included", () => {
    const { resolved, logger } = resolve({ nodeTimeout: 0.05, toolTimeout: 12 });
    expect(resolved.nodeTimeoutMs).toBe(50);
    expect(resolved.toolTimeoutMs).toBe(12_000);
    expect(logger.records).toEqual([]);
  });

  it.each([null, 0, -1, -0.5, Infinity, -Infinity])(
    "%s disables the deadline, without a warning",
    (value) => {
      const { resolved, logger } = resolve({ nodeTimeout: value, toolTimeout: value });
      expect(resolved.nodeTimeoutMs).toBeNull();
      expect(resolved.toolTimeoutMs).toBeNull();
      expect(logger.records).toEqual([]);
    },
  );

  it.each(["abc", NaN, "30", {}, true])(
    "an invalid value (%s) logs a warning and uses the default",
    (value) => {
      const { resolved, logger } = resolve({
        nodeTimeout: value as never,
        toolTimeout: value as never,
      });
      expect(resolved.nodeTimeoutMs).toBe(900_000);
      expect(resolved.toolTimeoutMs).toBe(300_000);
      const warnings = logger.records.filter((r) => r.level === "warn");
      expect(warnings.map((w) => w.fields.setting)).toEqual(["nodeTimeout", "toolTimeout"]);
      expect(warnings[0]?.fields).toMatchObject({
        threadId: "t",
        value: String(value),
        defaultSeconds: 900,
      });
      expect(warnings[1]?.fields).toMatchObject({ defaultSeconds: 300 });
      expect(warnings[0]?.message).toContain("nodeTimeout");
    },
  );

  it("resolveTimeout treats undefined as 'use the default' without a warning", () => {
    const logger = recordingLogger();
    expect(resolveTimeout(undefined, "x", 7, logger)).toBe(7000);
    expect(logger.records).toEqual([]);
  });
});

describe("recursionLimit", () => {
  it("accepts a positive integer", () => {
    const { resolved, logger } = resolve({ recursionLimit: 3 });
    expect(resolved.recursionLimit).toBe(3);
    expect(logger.records).toEqual([]);
  });

  it.each([0, -1, 2.5, NaN, Infinity, "10", null])(
    "an invalid value (%s) logs a warning and uses 25",
    (value) => {
      const { resolved, logger } = resolve({ recursionLimit: value as never });
      expect(resolved.recursionLimit).toBe(25);
      expect(logger.records).toHaveLength(1);
      expect(logger.records[0]).toMatchObject({
        level: "warn",
        fields: { threadId: "t", setting: "recursionLimit", value: String(value), default: 25 },
      });
    },
  );
});

describe("threadId", () => {
  it.each([undefined, ""])("when %j, a new one is generated and a warning says so", (threadId) => {
    const logger = recordingLogger();
    const resolved = resolveRunConfig({ threadId }, logger, () => "fresh-id");
    expect(resolved.threadId).toBe("fresh-id");
    expect(logger.records).toHaveLength(1);
    expect(logger.records[0]).toMatchObject({ level: "warn", fields: { threadId: "fresh-id" } });
    expect(logger.records[0]?.message).toMatch(/No threadId/);
  });
});

describe("through invoke", () => {
  it("an invalid timeout or recursionLimit warns on the graph's logger and the run still completes", async () => {
    const logger = recordingLogger();
    let steps = 0;
    const app = new StateGraph()
      .addNode("A", () => {
        steps += 1;
      })
      .addConditionalEdges("A", () => (steps < 30 ? "A" : END))
      .setEntryPoint("A")
      .compile({ checkpointer: new InMemoryCheckpointer(), logger });
    const run = app.invoke(
      {},
      { threadId: "t", nodeTimeout: "abc" as never, recursionLimit: -3 as never },
    );
    // The default limit (25) applies, so the 30-step loop is cut off.
    await expect(run).rejects.toMatchObject({ code: "RECURSION_001" });
    expect(steps).toBe(25);
    const settings = logger.records
      .filter((r) => r.level === "warn")
      .map((r) => [r.fields.setting, r.fields.threadId]);
    expect(settings).toEqual([
      ["nodeTimeout", "t"],
      ["recursionLimit", "t"],
    ]);
  });
});
