import { CHILD_TRANSCRIPT_FUNCTION } from "./child-transcript.js";
import { CLAIM_ABSENT_CALLS_FUNCTION } from "./claim-absent-calls.js";
import { CLAIM_CALLS_FUNCTION } from "./claim-calls.js";
import { PUT_CHECKPOINT_FUNCTION } from "./put-checkpoint.js";
import { SEQ_RANGES_FUNCTION } from "./seq-ranges.js";
import { TRANSCRIPT_SEQS_FUNCTION } from "./transcript-seqs.js";

/** One function of the store: its name, and the one current text that creates it. */
export interface SqlFunction {
  readonly name: string;
  readonly text: string;
}

/**
 * Every function of the store, each as its current text (one file per function, here). They
 * are code, not schema steps: after the numbered migrations, setup installs each one whose text
 * changed since it was installed (install-functions.ts), so a migration never copies a
 * function's text and an upgrade never edits one.
 */
export const FUNCTIONS: readonly SqlFunction[] = [
  { name: "tenxgraph_put_checkpoint", text: PUT_CHECKPOINT_FUNCTION },
  { name: "tenxgraph_claim_calls", text: CLAIM_CALLS_FUNCTION },
  { name: "tenxgraph_claim_absent_calls", text: CLAIM_ABSENT_CALLS_FUNCTION },
  { name: "tenxgraph_child_transcript", text: CHILD_TRANSCRIPT_FUNCTION },
  { name: "tenxgraph_transcript_seqs", text: TRANSCRIPT_SEQS_FUNCTION },
  { name: "tenxgraph_seq_ranges", text: SEQ_RANGES_FUNCTION },
];
