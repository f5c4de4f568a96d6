import type { StateHistoryEntry } from "@tenxgraph/client";

/** What a version changed from the one before it. */
export interface VersionChanges {
  messagesAdded: number;
  /** State fields whose value differs, in the order the newer version lists them. */
  fieldsChanged: string[];
}

/** The transcript is counted, not compared: it is what `message_count` says. */
const TRANSCRIPT_FIELDS = new Set(["messages", "context"]);

/**
 * What `version` changed from `before` (the version it was written on; none for the first).
 * Fields are compared as JSON, so a field set to an equal value is no change.
 */
export function versionChanges(
  version: StateHistoryEntry,
  before: StateHistoryEntry | undefined,
): VersionChanges {
  const old = before?.values ?? {};
  const names = [...new Set([...Object.keys(version.values), ...Object.keys(old)])];
  return {
    messagesAdded: version.message_count - (before?.message_count ?? 0),
    fieldsChanged: names.filter(
      (name) =>
        !TRANSCRIPT_FIELDS.has(name) &&
        JSON.stringify(version.values[name]) !== JSON.stringify(old[name]),
    ),
  };
}

/** The changes as a short line: "2 messages; order_id, total". */
export function describeChanges(changes: VersionChanges): string {
  const parts: string[] = [];
  if (changes.messagesAdded !== 0) {
    const n = changes.messagesAdded;
    parts.push(`${n > 0 ? "+" : ""}${n} message${Math.abs(n) === 1 ? "" : "s"}`);
  }
  if (changes.fieldsChanged.length > 0) parts.push(changes.fieldsChanged.join(", "));
  return parts.length > 0 ? parts.join("; ") : "no change";
}
