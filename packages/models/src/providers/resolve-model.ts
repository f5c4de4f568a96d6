import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ModelError } from "@tenxgraph/core";
import type { LanguageModel } from "ai";

/** A model object of any Vercel AI SDK provider (`openai("gpt-4o")`, `anthropic(...)`, ...). */
export type LanguageModelObject = Exclude<LanguageModel, string>;

/** A model: an AI SDK model object, or `"provider/model"` resolved by {@link resolveModel}. */
export type ModelSpec = string | LanguageModelObject;

/** Settings for a model given as a string; ignored for a model object. */
export interface ProviderSettings {
  /** The API's base URL: required for `openai-compatible/…`, else it overrides the provider's. */
  baseURL?: string;
  /**
   * The API key. By default each provider reads its own environment variable when the request
   * is made: `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GOOGLE_GENERATIVE_AI_API_KEY`.
   */
  apiKey?: string;
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string>;
  /** A `fetch` to send requests through (a proxy, instrumentation). */
  fetch?: typeof globalThis.fetch;
  /** The provider's name in errors and metadata, for `openai-compatible` (default its prefix). */
  name?: string;
}

type Factory = (modelId: string, settings: ProviderSettings) => LanguageModelObject;

interface ProviderEntry {
  /** The npm package that implements the provider. */
  packageName: string;
  /** The range of that package this release is built against. */
  range: string;
  load(): Promise<Factory>;
}

const settingsOf = ({ baseURL, apiKey, headers, fetch }: ProviderSettings) => ({
  ...(baseURL !== undefined && { baseURL }),
  ...(apiKey !== undefined && { apiKey }),
  ...(headers !== undefined && { headers }),
  ...(fetch !== undefined && { fetch }),
});

/**
 * The providers a string can name. OpenAI and OpenAI-compatible endpoints ship with this
 * package; Anthropic and Google are optional peer dependencies, loaded on first use, so an app
 * installs only the providers it calls. Any other AI SDK provider works as a model object.
 */
const PROVIDERS: Readonly<Record<string, ProviderEntry>> = {
  // Chat Completions, not the Responses API: it is the API every OpenAI-compatible server
  // speaks, and it keeps no conversation state on the provider's side.
  openai: {
    packageName: "@ai-sdk/openai",
    range: "^3",
    load: async () => (id, s) => createOpenAI(settingsOf(s)).chat(id),
  },
  "openai-compatible": {
    packageName: "@ai-sdk/openai-compatible",
    range: "^2",
    load: async () => (id, s) =>
      createOpenAICompatible({
        ...settingsOf(s),
        baseURL: s.baseURL!,
        name: s.name ?? "openai-compatible",
        // Ask for token counts in the stream (`stream_options.include_usage`).
        includeUsage: true,
      })(id),
  },
  anthropic: {
    packageName: "@ai-sdk/anthropic",
    range: "^3",
    load: async () => {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return (id, s) => createAnthropic(settingsOf(s))(id);
    },
  },
  google: {
    packageName: "@ai-sdk/google",
    range: "^3",
    load: async () => {
      const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
      return (id, s) => createGoogleGenerativeAI(settingsOf(s))(id);
    },
  },
};

/** The provider prefixes a model string may start with. */
export const MODEL_PROVIDERS: readonly string[] = Object.freeze(Object.keys(PROVIDERS));

/**
 * Checks a model string without loading anything: `provider/model` with a known provider, and
 * the settings that provider needs. Throws `ModelError` (`MODEL_003`) naming the problem.
 */
export function checkModelSpec(
  spec: string,
  settings: ProviderSettings = {},
): { provider: string; modelId: string } {
  const slash = spec.indexOf("/");
  const provider = slash > 0 ? spec.slice(0, slash) : "";
  // Model ids may hold slashes themselves (`openai-compatible/meta-llama/Llama-3.1-8B`).
  const modelId = slash > 0 ? spec.slice(slash + 1) : "";
  if (!provider || !modelId.trim()) {
    throw new ModelError(
      "MODEL_003",
      spec,
      `a model string is "provider/model", e.g. "openai/gpt-4o-mini"`,
    );
  }
  if (!Object.hasOwn(PROVIDERS, provider)) {
    throw new ModelError(
      "MODEL_003",
      spec,
      `unknown provider '${provider}' (known: ${MODEL_PROVIDERS.join(", ")}); ` +
        `for any other AI SDK provider pass its model object instead of a string`,
    );
  }
  if (provider === "openai-compatible" && !settings.baseURL) {
    throw new ModelError(
      "MODEL_003",
      spec,
      "an openai-compatible model needs provider.baseURL, the server's API address",
    );
  }
  return { provider, modelId };
}

/**
 * Turns `"provider/model"` into an AI SDK model (`openai/…`, `openai-compatible/…` with a
 * `baseURL`, `anthropic/…`, `google/…`); a model object is returned as it is. Strings go to
 * the provider's own API, not through a gateway. Throws `ModelError` (`MODEL_003`) for an
 * unknown provider, missing settings, or an optional provider package that is not installed.
 *
 * @example
 * const model = await resolveModel("openai/gpt-4o-mini");
 * const local = await resolveModel("openai-compatible/llama3.1", { baseURL: "http://127.0.0.1:11434/v1" });
 */
export async function resolveModel(
  spec: ModelSpec,
  settings: ProviderSettings = {},
): Promise<LanguageModelObject> {
  if (typeof spec !== "string") return spec;
  const { provider, modelId } = checkModelSpec(spec, settings);
  const entry = PROVIDERS[provider]!;
  const factory = await loadProvider(spec, entry.packageName, entry.range, entry.load);
  return factory(modelId, settings);
}

/**
 * Loads a provider package, turning "not installed" into an error that says what to install.
 * Any other failure while loading is the package's own and is rethrown as it is.
 */
export async function loadProvider<T>(
  spec: string,
  packageName: string,
  range: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing =
      (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
      String((error as Error).message).includes(packageName);
    if (!missing) throw error;
    throw new ModelError(
      "MODEL_003",
      spec,
      `the provider package '${packageName}' is not installed: npm install ${packageName}@${range}`,
      { cause: error },
    );
  }
}

/** A model's name for errors and logs: the string as given, or `provider/modelId`. */
export function modelLabel(spec: ModelSpec): string {
  if (typeof spec === "string") return spec;
  return `${spec.provider}/${spec.modelId}`;
}
