/** The `p`-th percentile (0..100) of `values`, nearest rank; NaN for no values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** p50 and p99 of `values`, in their unit. */
export interface P50P99 {
  p50: number;
  p99: number;
}

export function p50p99(values: number[]): P50P99 {
  return { p50: percentile(values, 50), p99: percentile(values, 99) };
}
