/**
 * Test helpers: the checkpointer conformance suite every store must pass, a scripted model,
 * fault points for crash tests, and a logger that keeps its records.
 * @module
 */
export { checkpointerConformance } from "./conformance/index.js";
export type { CheckpointerHarness, TestApi } from "./conformance/index.js";
export { storeConformance } from "./conformance/store-conformance.js";
export type { StoreHarness } from "./conformance/store-harness.js";
export { hashEmbedding } from "./conformance/hash-embedding.js";
export { ScriptedModel } from "./scripted-model.js";
export type { ScriptedTurn } from "./scripted-model.js";
export { FaultPoints } from "./fault-points.js";
export type { FaultAction } from "./fault-points.js";
export { FAULT_POINTS } from "../node/fault-points.js";
export type { FaultContext, FaultInjector, FaultPointName } from "../node/fault-points.js";
export { recordingLogger } from "./recording-logger.js";
export type { LogRecord, RecordingLogger } from "./recording-logger.js";
export {
  SUPPORT_SCRIPT,
  supportAgent,
  supportModel,
  supportTools,
  type SupportAgentOptions,
  type SupportToolsOptions,
} from "./support-agent.js";
export { ledgerKey } from "../ledger/ledger-key.js";
export { decodeEnvelope } from "../ledger/envelope.js";
export type { ResultEnvelope } from "../ledger/envelope.js";
