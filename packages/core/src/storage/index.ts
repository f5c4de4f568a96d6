/**
 * The store implementer's contract (`@tenxgraph/core/storage`): the `Checkpointer` interface and
 * the records it reads and writes, the checks every store applies to what it is given, the
 * errors a store throws, and a helper for ledger rows. A store passes the conformance suite in
 * `@tenxgraph/core/testing`. Applications use `@tenxgraph/core`.
 * @module
 */
export type {
  Checkpointer,
  CheckpointRead,
  CheckpointRecord,
  CheckpointWrite,
  Frontier,
  FrontierTask,
  GraphVersion,
  LedgerCompletion,
  StepCommit,
  StepLedgerWrites,
  StepWrite,
  ThreadCheckpoint,
  ThreadStatus,
  ThreadSummary,
  VersionPage,
} from "./checkpointer.js";
export type {
  AttemptRef,
  ClaimResult,
  CompletedLedgerEntry,
  InterruptedLedgerEntry,
  LedgerClaim,
  LedgerEntry,
  LedgerStatus,
  StartedLedgerEntry,
} from "./ledger-entry.js";
export { BaseCheckpointer } from "./base-checkpointer.js";
export { decodeCheckpointRecord, encodeCheckpointRecord } from "./checkpoint-record.js";
export type { EncodedCheckpointRecord } from "./checkpoint-record.js";
export type {
  HistoryOptions,
  MessagePage,
  Page,
  StoreWrite,
  ThreadFilter,
  VersionRange,
} from "./base-checkpointer.js";
export {
  childRanges,
  isPrefix,
  prefixRanges,
  rangeSeqs,
  rangesLength,
  seqsHeldByAny,
  seqsToRanges,
  sliceRanges,
} from "./transcript-ranges.js";
export type { SeqRanges } from "./transcript-ranges.js";
export { requireWellFormed } from "./well-formed.js";
export { copyRefusal, ThreadCopyError } from "./thread-copy.js";
export type { CopySource, ThreadCopyRefusal } from "./thread-copy.js";
export { MAX_ID_LENGTH } from "./json-check.js";
export { ledgerEntryFromRow } from "./ledger-row.js";
export type { LedgerRow } from "./ledger-row.js";
export {
  ClaimLostError,
  StaleStateError,
  StorageError,
  StorageSchemaError,
  ThreadOwnerError,
} from "../errors/errors.js";
