import { z } from "zod";

const reference = z.string().min(1).regex(/.:./, 'expected "path:export"');

/**
 * `langgraph.json`, as LangGraph's CLI reads it: `graphs` (graph id → `path:export`), `env` (a
 * file or the variables themselves) and `auth.path`. `dependencies`, `node_version`,
 * `dockerfile_lines` and the rest are for LangGraph's image build: accepted and ignored. Our
 * own keys (`checkpointer`, `store`, `runs`, …) may sit beside them.
 */
export const langgraphConfigSchema = z.looseObject({
  graphs: z
    .record(
      z.string().regex(/^[A-Za-z0-9_.-]+$/, "a graph id is letters, digits, _ . -"),
      reference,
    )
    .refine((graphs) => Object.keys(graphs).length > 0, "name at least one graph"),
  env: z.union([z.string(), z.record(z.string(), z.string())]).nullish(),
  auth: z.looseObject({ path: reference.optional() }).nullish(),
});

/** True for a config in LangGraph's shape (it has `graphs`, not our `agent`). */
export function isLangGraphConfig(json: unknown): boolean {
  return typeof json === "object" && json !== null && "graphs" in json && !("agent" in json);
}

/**
 * A `langgraph.json` as our config: its first graph is the default (the /v1 routes serve it),
 * every graph is an assistant; `auth.path` is our custom auth (a function taking the request).
 */
export function fromLangGraphConfig(config: z.infer<typeof langgraphConfigSchema>): unknown {
  const { graphs, env, auth, ...rest } = config;
  const ours: Record<string, unknown> = { ...rest, agent: Object.values(graphs)[0]!, graphs };
  if (typeof env === "string") ours.env = env;
  else if (env) ours.env_vars = env;
  if (auth?.path) ours.auth = { method: "custom", path: auth.path };
  return ours;
}
