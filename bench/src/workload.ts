/** The workload: a ReAct loop of `turns` model turns, each asking for `toolsPerTurn` trivial tools. */
export interface Workload {
  turns: number;
  toolsPerTurn: number;
}

/** Node steps in one run: a model step and a tools step per turn, and the final answer. */
export function stepsPerRun({ turns }: Workload): number {
  return turns * 2 + 1;
}

/** Tool calls in one run. */
export function toolCallsPerRun({ turns, toolsPerTurn }: Workload): number {
  return turns * toolsPerTurn;
}

/** `50x4`: a workload's name in file and schema names. */
export function workloadTag({ turns, toolsPerTurn }: Workload): string {
  return `${turns}x${toolsPerTurn}`;
}
