const SEND = Symbol.for("tenxgraph.send");

/**
 * Runs `node` once more in the next step, with `input` laid over its copy of the state: a
 * conditional edge (or a `Command`'s `goto`) returns several to run one node many times in
 * parallel, each with its own input (map-reduce). The fields of `input` are what that run of the
 * node sees; only what it returns is merged, through the reducers, in the order of the sends.
 * `input` must be plain JSON: it is written with the step, so a crash replays the same sends.
 *
 * @example
 * graph.addConditionalEdges("PLAN", (s) => s.topics.map((topic) => new Send("RESEARCH", { topic })));
 */
export class Send<Input = Record<string, unknown>> {
  /** Checked by `isSend`, so two loaded copies of this package still recognise each other's sends. */
  readonly [SEND] = true;

  constructor(
    readonly node: string,
    readonly input: Input,
  ) {}
}

/** True for a `Send`, from this or another copy of the package. */
export function isSend(value: unknown): value is Send<unknown> {
  return (
    typeof value === "object" && value !== null && (value as { [SEND]?: unknown })[SEND] === true
  );
}
