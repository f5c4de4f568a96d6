import type { Checkpointer } from "../../storage/checkpointer.js";
import type { CheckpointerHarness } from "./checkpointer-harness.js";
import { childThreadsConformance } from "./child-threads.js";
import { historyConformance } from "./history.js";
import { idsConformance } from "./ids.js";
import { ledgerConformance } from "./ledger.js";
import { loneSurrogatesConformance } from "./lone-surrogates.js";
import { messagesConformance } from "./messages.js";
import { stateConformance } from "./state.js";
import { stopConformance } from "./stop.js";
import type { TestApi } from "./test-api.js";
import { threadCopyConformance } from "./thread-copy.js";
import { threadsConformance } from "./threads.js";

/**
 * Registers the one suite every checkpointer must pass (state, messages, history, ledger, stop
 * requests, threads, child threads, thread copies, ids, lone surrogates), under `describe("checkpointer conformance: <name>")`. Call it from a test file.
 * The suite never calls `setup()` before a test: stores must set themselves up on first use.
 *
 * The suite does not import a test framework: pass it as `test`. The vitest module fits as is
 * (`await import("vitest")`, or a namespace import of "vitest"), and so do jest's globals
 * (`{ describe, it, expect, beforeAll, afterAll, beforeEach, afterEach }`).
 *
 * @example
 * // sqlite-checkpointer.int.test.ts
 * checkpointerConformance(
 *   {
 *     name: "SqliteCheckpointer",
 *     create: async () => new SqliteCheckpointer({ path: join(tmpdir(), `${randomUUID()}.db`) }),
 *     destroy: (checkpointer) => checkpointer.close(),
 *   },
 *   await import("vitest"),
 * );
 */
export function checkpointerConformance(harness: CheckpointerHarness, test: TestApi): void {
  const { describe, beforeAll, afterAll, beforeEach, afterEach } = test;
  describe(`checkpointer conformance: ${harness.name}`, () => {
    let current: Checkpointer | undefined;
    let peer: Checkpointer | undefined;
    const get = (): Checkpointer => {
      if (!current) throw new Error("conformance: no checkpointer outside a running test");
      return current;
    };
    const getPeer = (): Checkpointer => peer ?? get();

    if (harness.beforeAll) beforeAll(() => harness.beforeAll!());
    if (harness.afterAll) afterAll(() => harness.afterAll!());
    beforeEach(async () => {
      current = await harness.create();
      peer = await harness.peer?.(current);
    });
    afterEach(async () => {
      const opened = [peer, current];
      [peer, current] = [undefined, undefined];
      for (const checkpointer of opened) if (checkpointer) await harness.destroy?.(checkpointer);
    });

    stateConformance(get, test, getPeer);
    messagesConformance(get, test);
    historyConformance(get, test, harness);
    ledgerConformance(get, test, getPeer);
    stopConformance(get, test, getPeer);
    threadsConformance(get, test, harness);
    childThreadsConformance(get, test);
    threadCopyConformance(get, test);
    idsConformance(get, test);
    loneSurrogatesConformance(get, test);
  });
}
