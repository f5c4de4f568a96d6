/**
 * The checkpointer conformance suite: every checkpointer runs it through a short harness.
 *
 * @module
 */
export { checkpointerConformance } from "./checkpointer-conformance.js";
export type { CheckpointerHarness } from "./checkpointer-harness.js";
export type { Assertion, AsyncMatchers, Expect, Matchers, TestApi, TestFn } from "./test-api.js";
