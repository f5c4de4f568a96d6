/** Small formatting helpers shared by the report's sections. */

export function fixed(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined ? "n/a" : value.toFixed(digits);
}

/** `0.43x`, or n/a. */
export function times(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined ? "n/a" : `${value.toFixed(digits)}x`;
}

export function whole(value: number | null | undefined): string {
  return value === null || value === undefined ? "n/a" : `${Math.round(value)}`;
}

export function yesNo(met: boolean): string {
  return met ? "**yes**" : "**no**";
}

export function toolsLabel(tools: number): string {
  return `${tools} tool${tools === 1 ? "" : "s"}/turn`;
}

export function workloadLabel(r: { turns: number; toolsPerTurn: number }): string {
  return `${r.turns} turns, ${toolsLabel(r.toolsPerTurn)}`;
}

/** `0.31x–0.52x`: the smallest and largest of `values`. */
export function range(values: number[], digits: number, unit: string): string {
  if (values.length === 0) return "n/a";
  const low = Math.min(...values).toFixed(digits);
  const high = Math.max(...values).toFixed(digits);
  return low === high ? `${low}${unit}` : `${low}${unit}–${high}${unit}`;
}

export function groupBy<T>(items: T[], key: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return [...groups];
}

/** A Markdown table from a header and rows of cells. */
export function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((cells) => `| ${cells.join(" | ")} |`),
  ];
}
