import { isTenxgraphError } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { checkModelSpec, loadProvider, modelLabel, resolveModel } from "./resolve-model.js";

async function codeOf(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; name: string }> {
  const error = await promise.then(
    () => expect.unreachable("should have failed"),
    (e: unknown) => e,
  );
  if (!isTenxgraphError(error)) throw error;
  return error;
}

describe("resolveModel", () => {
  it("resolves each provider prefix through the provider's own package", async () => {
    const cases = [
      ["openai/gpt-4o-mini", "openai.chat", "gpt-4o-mini"],
      ["anthropic/claude-sonnet-4-5", "anthropic.messages", "claude-sonnet-4-5"],
      ["google/gemini-2.5-flash", "google.generative-ai", "gemini-2.5-flash"],
    ] as const;
    for (const [spec, provider, modelId] of cases) {
      const model = await resolveModel(spec, { apiKey: "k" });
      expect([model.provider, model.modelId]).toEqual([provider, modelId]);
    }
  });

  it("gives openai-compatible models their base URL and keeps slashes in model ids", async () => {
    const model = await resolveModel("openai-compatible/meta-llama/Llama-3.1-8B", {
      baseURL: "http://127.0.0.1:1/v1",
      name: "local",
    });
    expect([model.provider, model.modelId]).toEqual(["local.chat", "meta-llama/Llama-3.1-8B"]);
  });

  it("returns a model object as it is", async () => {
    const model = await resolveModel("openai/gpt-4o", { apiKey: "k" });
    expect(await resolveModel(model)).toBe(model);
    expect(modelLabel(model)).toBe("openai.chat/gpt-4o");
    expect(modelLabel("openai/gpt-4o")).toBe("openai/gpt-4o");
  });

  it("rejects malformed strings, unknown providers and missing settings with MODEL_003", async () => {
    for (const spec of ["gpt-4o", "/gpt-4o", "openai/", "openai/  "]) {
      expect((await codeOf(resolveModel(spec))).code).toBe("MODEL_003");
    }
    const unknown = await codeOf(resolveModel("mistral/mistral-large"));
    expect(unknown.message).toBe(
      "Model 'mistral/mistral-large': unknown provider 'mistral' (known: openai, " +
        "openai-compatible, anthropic, google); for any other AI SDK provider pass its model " +
        "object instead of a string",
    );
    expect(() => checkModelSpec("openai-compatible/llama3")).toThrow(
      "an openai-compatible model needs provider.baseURL",
    );
  });
});

describe("loadProvider", () => {
  it("turns a provider package that is not installed into MODEL_003 saying what to install", async () => {
    const absent = "@ai-sdk/not-a-provider-tenxgraph";
    const error = await codeOf(
      loadProvider("notaprovider/x", absent, "^3", () => import(/* @vite-ignore */ absent)),
    );
    expect(error.code).toBe("MODEL_003");
    expect(error.name).toBe("ModelError");
    expect(error.message).toBe(
      `Model 'notaprovider/x': the provider package '${absent}' is not installed: ` +
        `npm install ${absent}@^3`,
    );
  });

  it("rethrows any other failure of the package as it is", async () => {
    const broken = new Error("provider crashed while loading");
    await expect(loadProvider("x/y", "@ai-sdk/x", "^3", () => Promise.reject(broken))).rejects.toBe(
      broken,
    );
  });
});
