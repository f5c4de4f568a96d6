import { z } from "zod";
import type { MemoryRecord } from "./memory-store.js";

/**
 * What the memory and file routes answer, as zod schemas for `/openapi.json` (the client has
 * no calls for them). `MemoryAnswersMatch` below makes the compiler hold the memory schema to
 * `MemoryRecord`; they are never run on a live answer.
 */

const memoryRecord = z.object({
  id: z.string(),
  content: z.string(),
  memory_type: z.string(),
  category: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  user_id: z.string(),
  thread_id: z.string().nullable(),
  timestamp: z.string(),
});

/** A memory as search and get answer it: scored, without its vector. */
const scoredMemory = memoryRecord.extend({ score: z.number(), vector: z.null() });

export const memoryListAnswer = z.object({ memories: z.array(memoryRecord) });
export const memoryStoredAnswer = z.object({ memory_id: z.string() });
export const memorySearchAnswer = z.object({ results: z.array(scoredMemory) });
export const memoryAnswer = z.object({ memory: scoredMemory.nullable() });
export const memoriesForgottenAnswer = z.object({
  success: z.literal(true),
  data: z.object({ deleted: z.number() }),
});
export const memoryChangedAnswer = z.object({
  success: z.literal(true),
  data: z.object({ memory_id: z.string() }),
});

export const fileInfoAnswer = z.object({
  file_id: z.string(),
  mime_type: z.string(),
  size_bytes: z.number(),
  filename: z.string(),
  extracted_text: z.string().nullable(),
  direct_url: z.null(),
  direct_url_expires_at: z.null(),
});
export const fileUploadedAnswer = fileInfoAnswer.extend({ url: z.string() });
export const fileUrlAnswer = z.object({
  file_id: z.string(),
  url: z.string(),
  expires_at: z.null(),
  mime_type: z.string(),
});
export const multimodalConfigAnswer = z.object({
  media_storage_type: z.literal("memory"),
  media_storage_path: z.null(),
  media_max_size_mb: z.number(),
  document_handling: z.literal("extract_text"),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only when `Check` is `true`. */
type Holds<Check extends true> = Check;

/** Compiles only while the memory schema describes `MemoryRecord` exactly. */
export type MemoryAnswersMatch = Holds<Same<z.output<typeof memoryRecord>, MemoryRecord>>;
