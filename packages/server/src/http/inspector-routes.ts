import { readFile, stat } from "node:fs/promises";
import { extname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Context, Hono } from "hono";
import { ApiError } from "./api-error.js";
import { fail } from "./envelope.js";
import type { ServerEnv } from "./server-env.js";

/** Where the inspector is served. Its files hold no data, so they need no token (see auth.ts). */
export const INSPECTOR_PATH = "/inspector";

/**
 * The prebuilt inspector: `dist/inspector/`, beside `dist/routes/`, written by the package's
 * build (vite) so users need no build step of their own.
 */
export const INSPECTOR_DIR = fileURLToPath(new URL("../inspector/", import.meta.url));

/**
 * The page loads only its own files and talks only to the server that serves it; no other site
 * may frame it (its buttons decide in-doubt calls).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

/**
 * The web inspector at `/inspector`: its static files, and `index.html` for every other path
 * under it (the page routes on the client). Every data request the page makes goes through the
 * API with the API's auth.
 */
export function inspectorRoutes(
  app: Hono<ServerEnv>,
  settings: InspectorSettings,
  root: string = INSPECTOR_DIR,
): void {
  const body = JSON.stringify({ trace_url: checkedTraceUrl(settings.traceUrl) });
  // Not a permanent redirect: a browser would keep it after the inspector is turned off.
  app.get(INSPECTOR_PATH, (c) => c.redirect(`${INSPECTOR_PATH}/`, 302));
  // The page's settings: no data in them, so no token (like its files).
  app.get(`${INSPECTOR_PATH}/${SETTINGS_FILE}`, (c) =>
    c.body(body, 200, { "content-type": "application/json", "cache-control": "no-cache" }),
  );
  app.get(`${INSPECTOR_PATH}/*`, async (c) => {
    const relative = decodedPath(c.req.path.slice(INSPECTOR_PATH.length + 1));
    const file =
      (relative === null ? null : await servableFile(root, relative)) ??
      (await servableFile(root, "index.html"));
    if (file === null) {
      return fail(
        c,
        new ApiError(
          404,
          "NOT_FOUND",
          "The inspector is not built: run `npm run build` in @tenxgraph/server",
        ),
      );
    }
    return sendFile(c, file);
  });
}

/** What the server tells the page, at `/inspector/settings.json`. */
export interface InspectorSettings {
  /** A URL with `{traceId}` in it: where a run's trace id links to; `null`: shown as text. */
  traceUrl: string | null;
}

/** The settings' file name under {@link INSPECTOR_PATH}. */
export const SETTINGS_FILE = "settings.json";

/** `url` when it is an http(s) URL naming `{traceId}`; anything else is refused at startup. */
function checkedTraceUrl(url: string | null): string | null {
  if (url === null) return null;
  let parsed: URL | null;
  try {
    parsed = new URL(url.replaceAll("{traceId}", "0"));
  } catch {
    parsed = null;
  }
  if (!url.includes("{traceId}") || !parsed || !/^https?:$/.test(parsed.protocol)) {
    throw new TypeError(
      `traceUrl must be an http(s) URL with '{traceId}' in it (where the trace id goes), got '${url}'`,
    );
  }
  return url;
}

/** The path with its escapes decoded, or `null` when they are malformed (no file has such a name). */
function decodedPath(path: string): string | null {
  try {
    return decodeURIComponent(path);
  } catch {
    return null;
  }
}

/** `relative` inside `root` when it is a file there; never a path that climbs out of `root`. */
async function servableFile(root: string, relative: string): Promise<string | null> {
  if (relative === "" || relative.includes("\0")) return null;
  const base = resolve(root);
  const path = resolve(base, relative);
  if (!path.startsWith(base + sep)) return null;
  const info = await stat(path).catch(() => null);
  return info?.isFile() ? path : null;
}

async function sendFile(c: Context<ServerEnv>, path: string): Promise<Response> {
  const body = await readFile(path);
  // Vite names the files under assets/ by their content hash: they never change under a name.
  // index.html names the current ones, so it is checked on every load.
  const hashed = path.includes(`${sep}assets${sep}`);
  return c.body(body, 200, {
    "content-type": CONTENT_TYPES[extname(path)] ?? "application/octet-stream",
    "cache-control": hashed ? "public, max-age=31536000, immutable" : "no-cache",
    "x-content-type-options": "nosniff",
    "content-security-policy": CONTENT_SECURITY_POLICY,
  });
}
