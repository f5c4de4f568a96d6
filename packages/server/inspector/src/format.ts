/** A time as the operator's clock shows it, with seconds; "—" when there is none. */
export function clockTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  // Message timestamps are seconds since the epoch; the API's dates are ISO strings.
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, { hour12: false });
}

/** How long from `start` to `end` (ISO strings), readable: "850 ms", "3.2 s", "4 min 10 s". */
export function duration(start: string | null | undefined, end: string | null | undefined): string {
  if (!start || !end) return "—";
  const ms = new Date(end).getTime() - new Date(start).getTime();
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** `value` as indented JSON, for payloads and results. */
export function pretty(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}
