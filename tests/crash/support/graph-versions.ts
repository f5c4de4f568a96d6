import type { LedgerEntry } from "@tenxgraph/core/storage";
import type { ToolName } from "./agent-params.js";

/**
 * The support agent's two versions, for a deploy in the middle of a run (the chaos run's). A
 * version 2 worker renames charge_card to charge_payment and adds an AUDIT node after every
 * tool step; its migration carries version 1's threads over. The plans, the effect log and the
 * checks speak version 1's names: what version 2 records under a renamed tool is read back
 * under the former name ({@link asVersion1}), so one charge is one charge whatever recorded it.
 */
export type GraphVersion = 1 | 2;

/** Version 2's tool renames, former → current. */
export const RENAMED_IN_V2: Readonly<Partial<Record<ToolName, string>>> = {
  charge_card: "charge_payment",
};

/** The node version 2 adds between the tool step and the model. */
export const ADDED_IN_V2 = "AUDIT";

/** What `compile()` gets for a worker of `version` (nothing when no version is asked for). */
export function versionOptions(version: GraphVersion | undefined): {
  version?: string;
  migrations?: { from: string; tools: Record<string, string> }[];
} {
  if (version === undefined) return {};
  if (version === 1) return { version: "1" };
  const tools = Object.fromEntries(Object.entries(RENAMED_IN_V2).map(([f, c]) => [f, c!]));
  return { version: "2", migrations: [{ from: "1", tools }] };
}

/** A tool's name in the graph of `version`. */
export function toolNameIn(name: ToolName, version: GraphVersion | undefined): string {
  return version === 2 ? (RENAMED_IN_V2[name] ?? name) : name;
}

/** The version 1 name of a tool named `name` in either version. */
export function version1Name(name: string): string {
  const former = Object.entries(RENAMED_IN_V2).find(([, current]) => current === name)?.[0];
  return former ?? name;
}

/** A ledger key as version 1 makes it (a domain key scoped by a renamed tool, scoped by its former name). */
export function version1Key(key: string): string {
  const scope = /^([^:]+):/.exec(key)?.[1];
  if (scope === undefined || version1Name(scope) === scope) return key;
  return `${version1Name(scope)}${key.slice(scope.length)}`;
}

/**
 * A ledger entry as version 1 would name it: its key and its tool; `recordedAs` keeps the key
 * version 2 recorded, for a failure's report.
 */
export function asVersion1(entry: LedgerEntry): LedgerEntry {
  const key = version1Key(entry.key);
  const renamed = key === entry.key ? {} : { recordedAs: entry.key };
  return { ...entry, key, toolName: version1Name(entry.toolName), ...renamed };
}
