import type { Route } from "../http/route-table.js";
import {
  fileInfoAnswer,
  fileUploadedAnswer,
  fileUrlAnswer,
  multimodalConfigAnswer,
} from "./storage-answers.js";
import type { StorageContext } from "./storage-context.js";
import { ApiError } from "../http/api-error.js";
import { ok } from "../http/envelope.js";
import { pathId } from "../http/request-input.js";
import type { StoredFile } from "./file-store.js";

/** Largest upload, in MB (`MEDIA_MAX_SIZE_MB`). */
const MAX_FILE_MB = Number(process.env.MEDIA_MAX_SIZE_MB ?? 25);

/** Uploads and reads of files; another user's file answers 404, as if it did not exist. */
export const fileRoutes: Route<StorageContext>[] = [
  {
    method: "post",
    path: "/v1/files/upload",
    summary: "Upload a file (multipart, field 'file')",
    responses: {
      200: { description: "The stored file", schema: fileUploadedAnswer },
    },
    handler: async (c, ctx) => {
      const form = await c.req.formData().catch(() => {
        throw new ApiError(
          400,
          "BAD_REQUEST",
          "Expected a multipart/form-data body with a 'file' field",
        );
      });
      const file = form.get("file");
      if (file === null || typeof file === "string") {
        throw new ApiError(
          400,
          "BAD_REQUEST",
          "The multipart field 'file' is missing or not a file",
        );
      }
      if (file.size === 0) throw new ApiError(400, "BAD_REQUEST", "The uploaded file is empty");
      if (file.size > MAX_FILE_MB * 1024 * 1024) {
        throw new ApiError(413, "REQUEST_TOO_LARGE", `The file is larger than ${MAX_FILE_MB} MB`);
      }
      const bytes = new Uint8Array(await file.arrayBuffer());
      const stored = await ctx.files.put(
        c.get("user").id,
        file.name || "upload",
        file.type || "application/octet-stream",
        bytes,
      );
      return ok(c, {
        ...fileInfo(stored),
        url: `/v1/files/${stored.id}`,
        direct_url: null,
        direct_url_expires_at: null,
      });
    },
  },
  {
    method: "get",
    path: "/v1/files/{file_id}",
    summary: "A file's bytes",
    responses: {
      200: { description: "The file's bytes, with its MIME type", body: "bytes" },
    },
    handler: async (c, ctx) => {
      const file = await findFile(ctx, c.get("user").id, pathId(c, "file_id"));
      return c.body(file.bytes.slice().buffer, 200, { "Content-Type": file.mimeType });
    },
  },
  {
    method: "get",
    path: "/v1/files/{file_id}/info",
    summary: "A file's details",
    responses: {
      200: { description: "The file's details", schema: fileInfoAnswer },
    },
    handler: async (c, ctx) => {
      const file = await findFile(ctx, c.get("user").id, pathId(c, "file_id"));
      return ok(c, { ...fileInfo(file), direct_url: null, direct_url_expires_at: null });
    },
  },
  {
    method: "get",
    path: "/v1/files/{file_id}/url",
    summary: "A file's URL",
    responses: {
      200: { description: "The file's URL", schema: fileUrlAnswer },
    },
    handler: async (c, ctx) => {
      const file = await findFile(ctx, c.get("user").id, pathId(c, "file_id"));
      return ok(c, {
        file_id: file.id,
        url: `/v1/files/${file.id}`,
        expires_at: null,
        mime_type: file.mimeType,
      });
    },
  },
  {
    method: "get",
    path: "/v1/config/multimodal",
    summary: "Upload settings",
    responses: {
      200: { description: "Upload settings", schema: multimodalConfigAnswer },
    },
    handler: (c) =>
      ok(c, {
        media_storage_type: "memory",
        media_storage_path: null,
        media_max_size_mb: MAX_FILE_MB,
        document_handling: "extract_text",
      }),
  },
];

/** The caller's file `id`; another user's answers 404, as if it did not exist. */
async function findFile(ctx: StorageContext, owner: string, id: string): Promise<StoredFile> {
  const file = await ctx.files.get(owner, id);
  if (!file) throw new ApiError(404, "NOT_FOUND", `File '${id}' not found`);
  return file;
}

function fileInfo(file: StoredFile) {
  const text = file.mimeType.startsWith("text/") ? new TextDecoder().decode(file.bytes) : null;
  return {
    file_id: file.id,
    mime_type: file.mimeType,
    size_bytes: file.bytes.byteLength,
    filename: file.filename,
    extracted_text: text,
  };
}
