import { TenxgraphError } from "./tenxgraph-error.js";

/**
 * An option the function does not know (`OPTION_001`): a LangGraph.js name (`configurable`,
 * `checkpointSaver`, `prompt`), a typo, or one of another function's options. JavaScript would
 * otherwise ignore it silently. `option` is the key; the message says what to use instead,
 * when there is something, and lists the known options. Nothing was run or built.
 */
export class UnknownOptionError extends TenxgraphError {
  constructor(
    /** Where it was passed: `compile()`, `invoke() config`, `createReactAgent()`. */
    readonly where: string,
    readonly option: string,
    message: string,
  ) {
    super("OPTION_001", message);
  }
}

/** What to say of an option that is not known, by its name. */
export type OptionHints = Readonly<Record<string, string>>;

/**
 * Refuses the first own key of `options` that is not in `known`, with an
 * {@link UnknownOptionError} naming it, the hint for it and the known options. Called once per
 * call (a few `Set` lookups), never per step.
 */
export function requireKnownOptions(
  where: string,
  options: object,
  known: ReadonlySet<string>,
  hints: OptionHints = {},
): void {
  for (const option of Object.keys(options)) {
    if (known.has(option)) continue;
    const hint = Object.hasOwn(hints, option) ? ` ${hints[option]}.` : "";
    throw new UnknownOptionError(
      where,
      option,
      `${where}: unknown option '${option}'.${hint} Known options: ${[...known].join(", ")}`,
    );
  }
}

/** Hints for LangGraph.js names that are not tenxgraph options, shared by every place. */
export const LANGGRAPH_OPTION_HINTS: OptionHints = {
  checkpointSaver: "Use 'checkpointer'",
  debug: "Use a 'logger' (at debug level) or stream(input, { streamMode: 'debug' })",
};
