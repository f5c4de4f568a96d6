import {
  Message,
  type BaseState,
  type CompiledGraph,
  type Interrupt,
  type RunInput,
  type StreamEvent,
} from "@tenxgraph/core";
import { report } from "../../support/worker-process.js";
import type { AgentParams } from "./agent-params.js";
import { buildSupportAgent, type AgentHooks } from "./support-agent.js";
import { buildTeamAgent } from "./team-agent.js";

/** How a worker's run ended (when it did). */
export interface RunOutcome {
  status: string;
  version: number;
  interrupts: Interrupt[];
}

/** Generous deadlines: a test never waits for one; hangs end by SIGKILL, not by a timeout. */
const RUN_CONFIG = { toolTimeout: 60, nodeTimeout: 120 };

/** Runs the agent (or the team) once, through `invoke` or `stream` as the params say. */
export function runAgent(params: AgentParams, hooks: AgentHooks): Promise<RunOutcome> {
  return params.team
    ? runGraph(buildTeamAgent(params, hooks), params)
    : runGraph(buildSupportAgent(params, hooks), params);
}

async function runGraph<S extends BaseState>(
  app: CompiledGraph<S>,
  params: AgentParams,
): Promise<RunOutcome> {
  const config = { ...RUN_CONFIG, threadId: params.threadId };
  const input = toInput<S>(params);
  if (params.via === "invoke") {
    const result = await app.invoke(input, config);
    return { status: result.status, version: result.version, interrupts: result.interrupts };
  }
  let outcome: RunOutcome | undefined;
  let interrupts: Interrupt[] = [];
  for await (const event of app.stream(input, config)) {
    await report({ type: "event", event: slim(event) });
    if (event.type === "interrupt") interrupts = event.interrupts;
    if (event.type === "run_end") {
      outcome = { status: event.status, version: event.version, interrupts };
    }
  }
  if (!outcome) throw new Error("stream ended without run_end");
  return outcome;
}

function toInput<S extends BaseState>(params: AgentParams): RunInput<S> {
  const { input } = params;
  if (input.kind === "continue") return null;
  if (input.kind === "resume") {
    return input.interruptId === undefined
      ? { resume: input.answer }
      : { resume: input.answer, interruptId: input.interruptId };
  }
  return { messages: [Message.user(input.text)] } as Partial<S>;
}

/** The event without bulky payloads: enough for the parent to check what `stream` told the user. */
function slim(event: StreamEvent): Record<string, unknown> {
  if (event.type === "tool_result") {
    const { message: _message, ...rest } = event;
    return rest;
  }
  if (event.type === "message") return { type: event.type, node: event.node, id: event.message.id };
  return event;
}
