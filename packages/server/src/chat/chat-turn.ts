import { IN_DOUBT_INTERRUPT_KIND, type Interrupt, type Message } from "@tenxgraph/core";
import type { ThreadCheckpoint } from "@tenxgraph/core/storage";
import { ApiError } from "../http/api-error.js";
import type { AuthUser } from "../http/server-env.js";
import type { InvokeContext } from "../invoke/invoke-context.js";
import { grantThread, type ThreadGrant } from "../threads/ownership.js";
import type { GraphInput } from "../wire/request-schemas.js";
import {
  answeredToolParts,
  userMessageText,
  type AnsweredToolPart,
  type ChatRequest,
  type UiMessage,
} from "./chat-request.js";
import type { KnownCall } from "./chat-chunks.js";

/** What one chat request runs: the graph input, and the assistant UI message it streams into. */
export interface ChatTurn {
  input: GraphInput;
  /** The id of the assistant UI message the run's parts belong to (`start`'s `messageId`). */
  replyId: string;
  /** The calls of the thread's last model reply, which a resumed run's tools answer. */
  earlierCalls: KnownCall[];
  /** The check the turn was read under: the run starts from its read instead of reading again. */
  grant?: ThreadGrant;
}

/** The assistant UI message that answers the user message `userMessageId`. */
export function replyIdFor(userMessageId: string): string {
  return `reply-${userMessageId}`;
}

/**
 * Reads a chat request as a run of the thread `id`: a new user message is a new turn; an
 * assistant message whose tool parts answer the thread's pending interrupts resumes the run
 * (by interrupt id); `regenerate-message`, and a user message sent again with its id (an edit),
 * fork from the version that added it.
 * Anything else is a 422 naming the problem, and nothing is written.
 */
export async function chatTurn(
  ctx: InvokeContext,
  user: AuthUser,
  request: ChatRequest,
): Promise<ChatTurn> {
  const grant = await grantThread(ctx.checkpointer, user, request.id, "run on");
  const turn = await turnOf(ctx, request, grant.read.checkpoint);
  return { ...turn, grant };
}

async function turnOf(
  ctx: InvokeContext,
  request: ChatRequest,
  checkpoint: ThreadCheckpoint | null,
): Promise<ChatTurn> {
  const last = request.messages.at(-1)!;
  const where = `messages[${request.messages.length - 1}]`;
  if (request.trigger === "regenerate-message") {
    requireUserText(last, where);
    const from = await versionAdding(ctx, request.id, checkpoint, last.id);
    return {
      input: { ...newInput([], { thread_id: request.id, from_version: from }), continue: true },
      replyId: replyIdFor(last.id),
      earlierCalls: [],
    };
  }
  if (last.role === "user") return userTurn(ctx, request, checkpoint, requireUserText(last, where));
  return answerTurn(ctx, request, checkpoint, where);
}

/**
 * A user message: a new turn, or, sent again with its id as `messageId` (`sendMessage({ text,
 * messageId })`), an edit: the run forks from the version that added it, where the edited
 * message (same id) takes its place.
 */
async function userTurn(
  ctx: InvokeContext,
  request: ChatRequest,
  checkpoint: ThreadCheckpoint | null,
  text: string,
): Promise<ChatTurn> {
  const { id } = request.messages.at(-1)!;
  const edit = request.messageId === id;
  const from = edit ? await versionAdding(ctx, request.id, checkpoint, id) : undefined;
  const config = { thread_id: request.id, ...(from === undefined ? {} : { from_version: from }) };
  return {
    input: newInput([{ role: "user", content: text, message_id: id }], config),
    replyId: replyIdFor(id),
    earlierCalls: [],
  };
}

/** The assistant message sent back with answers: the run resumes, each answer by interrupt id. */
async function answerTurn(
  ctx: InvokeContext,
  request: ChatRequest,
  checkpoint: ThreadCheckpoint | null,
  where: string,
): Promise<ChatTurn> {
  const last = request.messages.at(-1)!;
  const resume = answersOf(checkpoint, last);
  if (resume === null) {
    throw new ApiError(
      422,
      "CHAT_NOTHING_TO_RUN",
      `${where} is neither a user message nor an answer to an interrupt thread '${request.id}' waits for`,
      [
        {
          loc: ["body", ...where.replace("]", "").split("[")],
          msg: "nothing to run",
          type: "value_error",
        },
      ],
    );
  }
  const tail = await threadTail(ctx, request.id, checkpoint);
  return {
    input: { ...newInput([], { thread_id: request.id }), resume },
    replyId: last.id,
    earlierCalls: lastCalls(tail),
  };
}

/** A run that carries on the thread's unfinished run (after a crash), streaming into its reply. */
export async function continueTurn(
  ctx: InvokeContext,
  threadId: string,
  checkpoint: ThreadCheckpoint,
): Promise<ChatTurn> {
  const tail = await threadTail(ctx, threadId, checkpoint);
  const asked = tail.findLast((m) => m.role === "user");
  return {
    input: { ...newInput([], { thread_id: threadId }), continue: true },
    replyId: replyIdFor(asked?.id ?? threadId),
    earlierCalls: lastCalls(tail),
  };
}

function newInput(messages: GraphInput["messages"], config: Record<string, unknown>): GraphInput {
  return { messages, config, recursion_limit: 25, response_granularity: "full" };
}

function requireUserText(message: UiMessage, where: string): string {
  const { text, badPart } = message.role === "user" ? userMessageText(message) : {};
  if (text !== undefined && text.trim() !== "") return text;
  const problem =
    message.role !== "user"
      ? `${where} must be the user's message (role "user"), not "${message.role}"`
      : badPart !== undefined
        ? `${where}.parts[${badPart}] is a "${message.parts[badPart]!.type}" part: only text parts are read`
        : `${where} has no text`;
  throw new ApiError(422, "VALIDATION_ERROR", problem, [
    { loc: ["body", ...where.replace(/\]/g, "").split(/[.[]/)], msg: problem, type: "value_error" },
  ]);
}

/** The answers `message`'s tool parts give to the pending interrupts, by interrupt id. */
function answersOf(
  checkpoint: ThreadCheckpoint | null,
  message: UiMessage,
): Record<string, unknown> | null {
  if (checkpoint?.status !== "interrupted") return null;
  const parts = answeredToolParts(message);
  const answers: Record<string, unknown> = {};
  for (const interrupt of checkpoint.interrupts) {
    const part = interrupt.toolCallId ? parts.get(interrupt.toolCallId) : undefined;
    const answer = part ? answerOf(interrupt, part) : undefined;
    if (answer !== undefined) answers[interrupt.id] = answer;
  }
  return Object.keys(answers).length > 0 ? answers : null;
}

/**
 * The resume value of one answered part. An approval is `{ approved, reason? }` for a tool's own
 * `interrupt()`; for a call in doubt, approving retries it and denying fails it. An output the
 * page added (`addToolOutput`) is the answer itself, or completes a call in doubt with it.
 */
function answerOf(interrupt: Interrupt, part: AnsweredToolPart): unknown {
  const inDoubt = (interrupt.value as { kind?: unknown } | null)?.kind === IN_DOUBT_INTERRUPT_KIND;
  if (part.state === "output-available") {
    return inDoubt ? { action: "complete", result: part.output } : part.output;
  }
  if (part.approval.id !== interrupt.id) return undefined; // an answer to an earlier question
  const reason = part.approval.reason === undefined ? {} : { reason: part.approval.reason };
  if (inDoubt) return part.approval.approved ? { action: "retry" } : { action: "fail", ...reason };
  return { approved: part.approval.approved, ...reason };
}

/** The last messages of the thread's transcript (enough to find its last turn). */
async function threadTail(
  ctx: InvokeContext,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
): Promise<Message[]> {
  const count = checkpoint?.messageCount ?? 0;
  return ctx.checkpointer.listMessages(threadId, { offset: Math.max(0, count - 200) });
}

function lastCalls(messages: Message[]): KnownCall[] {
  return messages.findLast((m) => m.role === "assistant" && m.toolCalls?.length)?.toolCalls ?? [];
}

/**
 * The version that added the user message `messageId` to the thread's current branch (the
 * run's input write): a regenerated reply forks from it, so the model is asked again with the
 * same transcript and the branch after it is left behind.
 */
async function versionAdding(
  ctx: InvokeContext,
  threadId: string,
  checkpoint: ThreadCheckpoint | null,
  messageId: string,
): Promise<number> {
  const messages = checkpoint ? await ctx.checkpointer.listMessages(threadId) : [];
  const index = messages.findIndex((m) => m.id === messageId);
  if (checkpoint === null || index === -1) {
    throw new ApiError(
      422,
      "CHAT_MESSAGE_NOT_FOUND",
      `Thread '${threadId}' has no message '${messageId}' to edit or regenerate the reply to`,
    );
  }
  let version: ThreadCheckpoint = checkpoint;
  while (version.parentVersion !== null) {
    const parent = await ctx.checkpointer.getVersion(threadId, version.parentVersion);
    if (parent === null) {
      throw new ApiError(
        404,
        "VERSION_NOT_FOUND",
        `Thread '${threadId}' no longer keeps version ${version.parentVersion}, before the reply to regenerate (pruned versions are gone)`,
      );
    }
    if (parent.messageCount <= index) break;
    version = parent;
  }
  return version.version;
}
