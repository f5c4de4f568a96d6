import { uuidv7 } from "@tenxgraph/core/host";

/** An uploaded file. */
export interface StoredFile {
  id: string;
  owner: string;
  filename: string;
  mimeType: string;
  bytes: Uint8Array;
}

/** Where `/v1/files/*` keeps uploads; reads are scoped by owner (another user's file is absent). */
export interface FileStore {
  put(owner: string, filename: string, mimeType: string, bytes: Uint8Array): Promise<StoredFile>;
  get(owner: string, id: string): Promise<StoredFile | null>;
}

/** A {@link FileStore} in this process's memory. */
export class InMemoryFileStore implements FileStore {
  readonly #files = new Map<string, StoredFile>();

  async put(
    owner: string,
    filename: string,
    mimeType: string,
    bytes: Uint8Array,
  ): Promise<StoredFile> {
    const file = { id: uuidv7(), owner, filename, mimeType, bytes };
    this.#files.set(file.id, file);
    return file;
  }

  async get(owner: string, id: string): Promise<StoredFile | null> {
    const file = this.#files.get(id);
    return file?.owner === owner ? file : null;
  }
}
