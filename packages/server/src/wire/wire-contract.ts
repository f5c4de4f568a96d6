import type {
  AddMessagesBody,
  AddMessagesResult,
  BackgroundRun,
  ClearStateResult,
  DeleteThreadResult,
  ErrorDetail,
  GraphInfo,
  GraphTools,
  InDoubtCall,
  InDoubtDecisionResult,
  InvokeResult,
  LedgerEntry,
  QueuedRun,
  RunStreamEvent,
  SetupResult,
  StateHistoryEntry,
  StateJsonSchema,
  StopResult,
  StreamChunk,
  ThreadInfo,
  WireMessage,
  WireState,
  CreateRunBody,
  CreateCronBody,
  Cron,
  CronDetail,
  WebhookDelivery,
  DeleteAfterBody,
  GraphInputBody,
  InDoubtDecision,
  MessageInput,
  PruneHistoryBody,
  PutStateBody,
  SetupToolsBody,
  StopBody,
  UpdateStateBody,
} from "@tenxgraph/client";
import type { z } from "zod";
import type {
  createCronSchema,
  createRunSchema,
  deleteAfterSchema,
  graphInputSchema,
  inDoubtDecisionBodySchema,
  pruneHistorySchema,
  putMessagesSchema,
  putStateSchema,
  setupInputSchema,
  stopInputSchema,
  updateStateSchema,
} from "./request-schemas.js";
import type { wireMessageSchema } from "./wire-message.js";
import type * as answers from "./response-schemas.js";
import type { errorEnvelopeSchema } from "../http/envelope.js";

/**
 * The one wire contract, checked by the compiler. The wire types live in `@tenxgraph/client`;
 * the server's answers are built as those types (`toWireMessage(): WireMessage`, …), and each
 * request schema must accept every body the client's type allows. The schemas accept more
 * than the client sends (10xGraph's clients: numeric message ids, loose objects), so the check
 * on requests runs one way: a client type that drifts from its schema fails `tsc` here.
 */
type Accepts<Schema extends z.ZodType, Body> = [Body] extends [z.input<Schema>] ? true : false;

/** Compiles only when every entry is `true`. */
type AllTrue<Checks extends true[]> = Checks;

export type WireRequestContract = AllTrue<
  [
    Accepts<typeof wireMessageSchema, MessageInput>,
    Accepts<typeof graphInputSchema, GraphInputBody>,
    Accepts<typeof createRunSchema, CreateRunBody>,
    Accepts<typeof createCronSchema, CreateCronBody>,
    Accepts<typeof stopInputSchema, StopBody>,
    Accepts<typeof setupInputSchema, SetupToolsBody>,
    Accepts<typeof putStateSchema, PutStateBody>,
    Accepts<typeof putMessagesSchema, AddMessagesBody>,
    Accepts<typeof updateStateSchema, UpdateStateBody>,
    Accepts<typeof pruneHistorySchema, PruneHistoryBody>,
    Accepts<typeof deleteAfterSchema, DeleteAfterBody>,
    Accepts<typeof inDoubtDecisionBodySchema, InDoubtDecision>,
  ]
>;

/**
 * Responses are checked both ways: every answer a schema allows is one the client's type takes,
 * and every value of the client's type is one the schema documents. So `/openapi.json`, the
 * client and the server's builders (typed by the client's types) say the same.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Describes<Schema extends z.ZodType, Answer> = Same<z.output<Schema>, Answer>;
/** One way only: the client's type names part of the answer (it reads only those fields). */
type FitsClient<Schema extends z.ZodType, Answer> = [z.output<Schema>] extends [Answer]
  ? true
  : false;

export type WireResponseContract = AllTrue<
  [
    Describes<typeof answers.wireMessageResponse, WireMessage>,
    Describes<typeof answers.wireStateResponse, WireState>,
    Describes<typeof answers.threadInfoResponse, ThreadInfo>,
    Describes<typeof answers.historyEntryResponse, StateHistoryEntry>,
    Describes<typeof answers.ledgerEntryResponse, LedgerEntry>,
    Describes<typeof answers.inDoubtCallResponse, InDoubtCall>,
    Describes<typeof answers.invokeResultResponse, InvokeResult>,
    Describes<typeof answers.inDoubtDecisionResponse, InDoubtDecisionResult>,
    Describes<typeof answers.stopResultResponse, StopResult>,
    Describes<typeof answers.streamChunkResponse, StreamChunk>,
    Describes<typeof answers.graphInfoResponse, GraphInfo>,
    Describes<typeof answers.graphToolsResponse, GraphTools>,
    Describes<typeof answers.stateJsonSchemaResponse, StateJsonSchema>,
    Describes<typeof answers.setupResultResponse, SetupResult>,
    Describes<typeof answers.backgroundRunResponse, BackgroundRun>,
    Describes<typeof answers.queuedRunResponse, QueuedRun>,
    Describes<typeof answers.runEventResponse, RunStreamEvent["event"]>,
    Describes<typeof answers.threadListResponse, { threads: ThreadInfo[] }>,
    Describes<typeof answers.threadDataResponse, { thread_data: { thread: ThreadInfo | null } }>,
    Describes<typeof answers.threadDeletedResponse, DeleteThreadResult>,
    Describes<typeof answers.stateResponse, { state: WireState | null }>,
    Describes<typeof answers.versionDoneResponse, ClearStateResult>,
    Describes<typeof answers.historyResponse, { history: StateHistoryEntry[] }>,
    Describes<typeof answers.pruneResponse, { deleted_versions: number }>,
    Describes<typeof answers.messageListResponse, { messages: WireMessage[] }>,
    Describes<typeof answers.messagesAddedResponse, AddMessagesResult>,
    Describes<typeof answers.ledgerResponse, { entries: LedgerEntry[] }>,
    Describes<typeof answers.inDoubtListResponse, { calls: InDoubtCall[] }>,
    Describes<typeof answers.runListResponse, { runs: BackgroundRun[] }>,
    Describes<typeof answers.cronResponse, Cron>,
    Describes<typeof answers.cronDetailResponse, CronDetail>,
    Describes<typeof answers.cronListResponse, { crons: Cron[] }>,
    Describes<typeof answers.webhookDeliveryListResponse, { deliveries: WebhookDelivery[] }>,
    FitsClient<typeof answers.stateUpdateResponse, { version: number; state: WireState | null }>,
    FitsClient<typeof answers.versionDoneResponse, { success: true; message: string }>,
    Describes<typeof errorEnvelopeSchema.shape.error.shape.details.element, ErrorDetail>,
  ]
>;
