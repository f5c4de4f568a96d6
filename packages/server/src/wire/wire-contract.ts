import type {
  AddMessagesBody,
  CreateRunBody,
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
