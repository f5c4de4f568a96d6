import { ToolNode, tool } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent } from "./agent.js";
import { DEFAULT_REQUEST_TIMEOUT_SECONDS, resolveAgentOptions } from "./agent-options.js";
import { DEFAULT_RETRY } from "./retry.js";

const ping = tool({
  name: "ping",
  description: "Ping.",
  schema: z.object({}),
  execute: () => "pong",
});

describe("Agent options", () => {
  it("defaults requestTimeout to 600 s and the retry policy, and freezes what it keeps", () => {
    const options = resolveAgentOptions({ model: "openai/gpt-4o-mini" });
    expect(options.requestTimeoutMs).toBe(DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000);
    expect(DEFAULT_REQUEST_TIMEOUT_SECONDS).toBe(600);
    expect(options.retry).toEqual(DEFAULT_RETRY);
    expect(options.tools).toEqual([]);
    expect(Object.isFrozen(options)).toBe(true);
    expect(new Agent({ model: "openai/gpt-4o-mini" }).model).toBe("openai/gpt-4o-mini");
  });

  it("disables the request timeout for null, 0, negative or Infinity, as run timeouts do", () => {
    for (const requestTimeout of [null, 0, -1, Infinity]) {
      expect(resolveAgentOptions({ model: "openai/x", requestTimeout }).requestTimeoutMs).toBe(
        null,
      );
    }
    expect(resolveAgentOptions({ model: "openai/x", requestTimeout: 1.5 }).requestTimeoutMs).toBe(
      1500,
    );
  });

  it("takes the tools of a ToolNode, or a list, but not both", () => {
    const toolNode = new ToolNode([ping]);
    expect(resolveAgentOptions({ model: "openai/x", toolNode }).tools).toEqual([ping]);
    expect(resolveAgentOptions({ model: "openai/x", tools: [ping] }).tools).toEqual([ping]);
    expect(() => new Agent({ model: "openai/x", tools: [ping], toolNode })).toThrow(
      "Agent: pass tools or toolNode, not both",
    );
    expect(() => new Agent({ model: "openai/x", tools: [ping, ping] })).toThrow(
      "Agent: two tools are named 'ping'",
    );
  });

  it("names the option that is wrong", () => {
    const bad = [
      [{ model: 42 }, "model must be a string like 'openai/gpt-4o-mini' or an AI SDK"],
      [{ model: "openai/x", temperature: -1 }, "temperature must be a number >= 0"],
      [{ model: "openai/x", maxTokens: 1.5 }, "maxTokens must be a positive integer"],
      [{ model: "openai/x", systemPrompt: 7 }, "systemPrompt must be a string"],
      [{ model: "openai/x", requestTimeout: "60" }, "requestTimeout must be seconds or null"],
      [{ model: "openai/x", retry: { maxAttempts: 0 } }, "retry.maxAttempts"],
      [{ model: "openai/x", prepareMessages: [] }, "prepareMessages must be a function"],
    ] as const;
    for (const [options, message] of bad) {
      expect(() => new Agent(options as never)).toThrow(message);
    }
  });

  it("checks a model string at construction: MODEL_003 before any run", () => {
    expect(() => new Agent({ model: "llama3" })).toThrow(
      expect.objectContaining({ code: "MODEL_003" }),
    );
    expect(() => new Agent({ model: "openai-compatible/llama3" })).toThrow(
      "an openai-compatible model needs provider.baseURL",
    );
  });
});
