import type { HistoryOptions } from "../../storage/base-checkpointer.js";
import type { Checkpointer } from "../../storage/checkpointer.js";

/**
 * How the conformance suite gets a checkpointer. `create` runs before every test and `destroy`
 * after it; `beforeAll`/`afterAll` can start and stop a server. Tests use fresh thread ids, so
 * every `create` may return a store over the same database.
 */
export interface CheckpointerHarness {
  name: string;
  create(): Promise<Checkpointer>;
  /** A checkpointer like `create`'s, with these history options (destroyed with `destroy`). */
  createWith(options: HistoryOptions): Promise<Checkpointer>;
  destroy?(checkpointer: Checkpointer): Promise<void>;
  /**
   * Another connection to the same store as `checkpointer` (destroyed with `destroy`). Races run
   * across the two, as two processes would: on one connection a store can pass them without
   * real isolation. Stores that cannot be shared (in-memory) leave it out.
   */
  peer?(checkpointer: Checkpointer): Promise<Checkpointer>;
  beforeAll?(): Promise<void>;
  afterAll?(): Promise<void>;
}
