import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

let typescriptReady: Promise<void> | undefined;

/** Lets `import()` load TypeScript files (through tsx's loader), once per process. */
async function enableTypeScript(): Promise<void> {
  typescriptReady ??= import("tsx/esm/api").then(({ register }) => {
    register();
  });
  return typescriptReady;
}

/**
 * Loads `"./file.ts:name"` (or `.js`/`.mjs`, or a package name) relative to `baseDir` and returns
 * that export (`default` when no name is given). Throws an error naming the reference when the
 * module or the export is missing.
 */
export async function loadExport(
  reference: string,
  baseDir: string,
  what: string,
): Promise<unknown> {
  const at = reference.lastIndexOf(":");
  // A Windows drive letter ("C:\\…") is not an export separator.
  const hasName = at > 1;
  const specifier = hasName ? reference.slice(0, at) : reference;
  const name = hasName ? reference.slice(at + 1) : "default";
  const local = specifier.startsWith(".") || isAbsolute(specifier);
  const target = local ? pathToFileURL(resolve(baseDir, specifier)).href : specifier;
  if (/\.[cm]?tsx?$/.test(specifier)) await enableTypeScript();
  let module: Record<string, unknown>;
  try {
    module = (await import(target)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`Cannot load ${what} '${reference}': ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!(name in module)) {
    const names = Object.keys(module).join(", ") || "none";
    throw new Error(
      `${what} '${reference}': the module has no export '${name}' (it exports: ${names})`,
    );
  }
  return module[name];
}
