import type { EmbedTexts } from "../../store/store.js";

/**
 * A deterministic embedding for tests: each lower-case word adds 1 to the dimension its hash
 * picks, so texts sharing words are similar and the same text always gets the same vector.
 *
 * @example
 * new InMemoryStore({ index: { embed: hashEmbedding(64), dims: 64, fields: ["text"] } });
 */
export function hashEmbedding(dims: number): EmbedTexts {
  return async (texts) =>
    texts.map((text) => {
      const vector = new Array<number>(dims).fill(0);
      for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
        let hash = 2166136261;
        for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 16777619);
        vector[(hash >>> 0) % dims]! += 1;
      }
      return vector;
    });
}
