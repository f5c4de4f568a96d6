import {
  uuidv7,
  type BaseState,
  type Message,
  type RunConfig,
  type RunInput,
} from "@tenxgraph/core";
import { validationError } from "./api-error.js";
import { authorizeThread } from "./ownership.js";
import { runConfigSchema, type GraphInput } from "./schemas.js";
import type { ServerContext } from "./server-context.js";
import type { AuthUser } from "./server-env.js";
import { fromWireMessage } from "./wire/convert-message.js";

/** A checked invoke/stream request, ready for `graph.invoke` or `graph.stream`. */
export interface PreparedRun {
  threadId: string;
  isNewThread: boolean;
  input: RunInput<BaseState>;
  config: RunConfig;
  /** The messages the client sent, with ids minted. */
  inputMessages: Message[];
  /** Transcript length before the run: the run's own messages come after it. */
  messagesBefore: number;
}

/** State fields a client may not set through `initial_state`: they belong to the runtime. */
const RESERVED_FIELDS = new Set(["messages", "context", "context_summary", "execution_meta"]);

/**
 * Turns a request into a run: the thread id (minted when absent, blank or `"0"`), ownership
 * checked, the user taken from authentication only (a client's `config.user`/`user_id` never
 * wins), and the input as a new turn, an interrupt answer or a continuation.
 */
export async function prepareRun(
  ctx: ServerContext,
  user: AuthUser,
  body: GraphInput,
): Promise<PreparedRun> {
  const parsed = runConfigSchema.safeParse(body.config ?? {});
  if (!parsed.success) throw validationError("body.config", parsed.error);
  const given = String(parsed.data.thread_id ?? "").trim();
  const threadId = given === "" || given === "0" ? uuidv7() : given;
  const checkpoint = await authorizeThread(ctx.checkpointer, user, threadId, "run on");
  const inputMessages = body.messages.map(fromWireMessage);
  const config: RunConfig = {
    threadId,
    userId: user.id,
    recursionLimit: body.recursion_limit,
    ...(parsed.data.node_timeout === undefined ? {} : { nodeTimeout: parsed.data.node_timeout }),
    ...(parsed.data.tool_timeout === undefined ? {} : { toolTimeout: parsed.data.tool_timeout }),
    ...(parsed.data.durable_checkpoint_every_step === undefined
      ? {}
      : { durableCheckpointEveryStep: parsed.data.durable_checkpoint_every_step }),
  };
  return {
    threadId,
    isNewThread: checkpoint === null,
    input: runInput(body, inputMessages),
    config,
    inputMessages,
    messagesBefore: checkpoint?.messageCount ?? 0,
  };
}

function runInput(body: GraphInput, messages: Message[]): RunInput<BaseState> {
  if (body.resume !== undefined) {
    return body.interrupt_id === undefined
      ? { resume: body.resume }
      : { resume: body.resume, interruptId: body.interrupt_id };
  }
  if (body.continue === true) return null;
  const fields = Object.fromEntries(
    Object.entries(body.initial_state ?? {}).filter(([key]) => !RESERVED_FIELDS.has(key)),
  );
  return { ...fields, messages } as Partial<BaseState>;
}
