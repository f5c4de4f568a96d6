import type { Send } from "./send.js";

const COMMAND = Symbol.for("tenxgraph.command");

/** Where a `Command` sends the run: a node, `END`, `Send`s, or several of them. */
export type Goto = string | Send<unknown> | readonly (string | Send<unknown>)[];

/** What a `Command` carries (LangGraph.js's names). */
export interface CommandOptions<Update> {
  /** A state update, applied as a node's returned update is. */
  update?: Update;
  /** Where to go next, besides the node's edges. */
  goto?: Goto;
  /** As a run's input: the answer to a pending interrupt, or a map of answers by interrupt id. */
  resume?: unknown;
  /** With `resume`: the interrupt answered, required when several are pending. */
  interruptId?: string;
  /**
   * `Command.PARENT`, from a node (or a tool) inside a subgraph: a handoff. The child's run ends
   * with this step, and the parent goes to `goto` (node names of the parent).
   */
  graph?: typeof PARENT;
}

const PARENT = "__parent__";

/**
 * A node's update and its routing in one value: `return new Command({ update, goto })` from a
 * node applies `update` and runs `goto` next (besides any edges out of the node; declare the
 * places it may go with `addNode(name, node, { ends })`). As a run's input,
 * `new Command({ resume: answer })` answers a pending interrupt, as `{ resume: answer }` does.
 *
 * @example
 * const triage = (state) => new Command({ update: { urgent: true }, goto: "ESCALATE" });
 * await app.invoke(new Command({ resume: { approved: true } }), { threadId });
 */
export class Command<Update = Record<string, unknown>> {
  /**
   * The graph a subgraph runs in: `new Command({ graph: Command.PARENT, goto: "billing", update })`
   * from a node or tool inside a subgraph applies `update` in the child, ends the child's run,
   * and sends the parent to `goto` (LangGraph.js's handoff). Recorded in the child's last step.
   */
  static readonly PARENT: typeof PARENT = PARENT;
  /** Checked by `isCommand`, so two loaded copies of this package still recognise each other's commands. */
  readonly [COMMAND] = true;
  declare readonly update?: Update;
  declare readonly goto?: Goto;
  declare readonly resume?: unknown;
  declare readonly interruptId?: string;
  declare readonly graph?: typeof PARENT;

  constructor(options: CommandOptions<Update>) {
    // Only the fields given are own properties: `{ resume }` input is recognised by its key.
    if (options.update !== undefined) this.update = options.update;
    if (options.goto !== undefined) this.goto = options.goto;
    if (Object.hasOwn(options, "resume")) this.resume = options.resume;
    if (options.interruptId !== undefined) this.interruptId = options.interruptId;
    if (options.graph !== undefined) this.graph = options.graph;
  }
}

/** True for a `Command`, from this or another copy of the package. */
export function isCommand(value: unknown): value is Command<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [COMMAND]?: unknown })[COMMAND] === true
  );
}
