import { StoreEmbeddingError, StoreInputError } from "./store-errors.js";
import type { EmbeddingModelLike, EmbedTexts, StoreIndex, StoreValue } from "./store.js";

/**
 * The store's `index`, checked once: embeds the texts of a value (one vector per text found at
 * its fields) and a search's query, and checks every answer has the index's `dims`.
 */
export class Embedder {
  readonly #embed: EmbedTexts;
  readonly #dims: number;
  readonly #fields: readonly string[];

  constructor(index: StoreIndex) {
    if (typeof index !== "object" || index === null) {
      throw new StoreInputError("index", "index is { embed, dims, fields? }");
    }
    if (!Number.isInteger(index.dims) || index.dims < 1) {
      throw new StoreInputError("index", `dims is a whole number >= 1, got ${String(index.dims)}`);
    }
    const fields = index.fields ?? ["$"];
    if (!Array.isArray(fields) || fields.some((f) => typeof f !== "string" || f === "")) {
      throw new StoreInputError("index", "fields is an array of field paths");
    }
    this.#embed = embedTexts(index.embed);
    this.#dims = index.dims;
    this.#fields = [...fields];
  }

  get dims(): number {
    return this.#dims;
  }

  /** The vectors of `value`'s texts; `[]` when it has none at the fields (or `fields` is false). */
  async vectorsOf(value: StoreValue, fields?: false | string[]): Promise<number[][]> {
    if (fields === false) return [];
    const texts = (fields ?? this.#fields).flatMap((path) => textsAt(value, path));
    return texts.length === 0 ? [] : this.#call(texts);
  }

  async queryVector(query: string): Promise<number[]> {
    return (await this.#call([query]))[0]!;
  }

  async #call(texts: string[]): Promise<number[][]> {
    let vectors: number[][];
    try {
      vectors = await this.#embed(texts);
    } catch (error) {
      throw new StoreEmbeddingError(`embedding ${texts.length} texts failed`, { cause: error });
    }
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new StoreEmbeddingError(
        `asked for ${texts.length} vectors, got ${Array.isArray(vectors) ? vectors.length : typeof vectors}`,
      );
    }
    for (const vector of vectors) {
      const fits =
        Array.isArray(vector) &&
        vector.length === this.#dims &&
        vector.every((x) => typeof x === "number" && Number.isFinite(x));
      if (!fits) {
        throw new StoreEmbeddingError(
          `a vector is not ${this.#dims} finite numbers (the index's dims)`,
        );
      }
    }
    return vectors;
  }
}

/** An embedding model as a function: `doEmbed` in batches of its `maxEmbeddingsPerCall`. */
function embedTexts(embed: EmbedTexts | EmbeddingModelLike): EmbedTexts {
  if (typeof embed === "function") return embed;
  if (typeof embed !== "object" || embed === null || typeof embed.doEmbed !== "function") {
    throw new StoreInputError("index", "embed is a function of texts or an AI SDK embedding model");
  }
  return async (texts, signal) => {
    const batch = (await embed.maxEmbeddingsPerCall) ?? texts.length;
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += Math.max(1, batch)) {
      const values = texts.slice(start, start + Math.max(1, batch));
      const { embeddings } = await embed.doEmbed({ values, abortSignal: signal });
      vectors.push(...embeddings);
    }
    return vectors;
  };
}

/**
 * The texts at `path` in `value`: `"$"` is the whole value as JSON; else field names joined by
 * `.`, where `name[*]` takes each element of an array and `name[2]` one. Strings are taken as
 * they are, other values as JSON; a path that leads nowhere gives none.
 */
export function textsAt(value: unknown, path: string): string[] {
  if (path === "$") return [JSON.stringify(value)];
  let current: unknown[] = [value];
  for (const segment of path.split(".")) {
    const [, name, index] = /^([^[]*)(?:\[(\*|\d+)\])?$/.exec(segment) ?? [];
    if (name === undefined) return [];
    current = current.flatMap((node) => step(node, name, index));
  }
  return current.map((node) => (typeof node === "string" ? node : JSON.stringify(node)));
}

function step(node: unknown, name: string, index: string | undefined): unknown[] {
  if (typeof node !== "object" || node === null) return [];
  const field = name === "" ? node : (node as Record<string, unknown>)[name];
  if (field === undefined || field === null) return [];
  if (index === undefined) return [field];
  if (!Array.isArray(field)) return [];
  if (index === "*") return field.filter((item) => item !== undefined && item !== null);
  const item: unknown = field[Number(index)];
  return item === undefined || item === null ? [] : [item];
}

/** Cosine similarity; 0 when either vector is all zeros. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
