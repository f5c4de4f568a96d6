import type { Checkpointer } from "../../storage/checkpointer.js";
import { ledgerConformance } from "./ledger.js";
import { messagesConformance } from "./messages.js";
import { stateConformance } from "./state.js";
import { stopConformance } from "./stop.js";
import type { TestApi } from "./test-api.js";
import { threadsConformance } from "./threads.js";

/**
 * How the conformance suite gets a checkpointer. `create` runs before every test and `destroy`
 * after it; `beforeAll`/`afterAll` can start and stop a server. Tests use fresh thread ids, so
 * every `create` may return a store over the same database.
 */
export interface CheckpointerHarness {
  name: string;
  create(): Promise<Checkpointer>;
  destroy?(checkpointer: Checkpointer): Promise<void>;
  beforeAll?(): Promise<void>;
  afterAll?(): Promise<void>;
}

/**
 * Registers the one suite every checkpointer must pass (state, messages, ledger, stop requests,
 * threads), under `describe("checkpointer conformance: <name>")`. Call it from a test file.
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
    const get = (): Checkpointer => {
      if (!current) throw new Error("conformance: no checkpointer outside a running test");
      return current;
    };

    if (harness.beforeAll) beforeAll(() => harness.beforeAll!());
    if (harness.afterAll) afterAll(() => harness.afterAll!());
    beforeEach(async () => {
      current = await harness.create();
    });
    afterEach(async () => {
      const checkpointer = current;
      current = undefined;
      if (checkpointer) await harness.destroy?.(checkpointer);
    });

    stateConformance(get, test);
    messagesConformance(get, test);
    ledgerConformance(get, test);
    stopConformance(get, test);
    threadsConformance(get, test, harness);
  });
}
