/**
 * Test helpers: the checkpointer conformance suite every store must pass, a scripted model,
 * and fault points for crash tests.
 * @module
 */
export { checkpointerConformance } from "./conformance/index.js";
export type { CheckpointerHarness, TestApi } from "./conformance/index.js";
export { ScriptedModel } from "./scripted-model.js";
export type { ScriptedTurn } from "./scripted-model.js";
export { FaultPoints } from "./fault-points.js";
export type { FaultAction } from "./fault-points.js";
