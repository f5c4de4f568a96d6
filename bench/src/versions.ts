import { createRequire } from "node:module";

const PACKAGES = [
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-checkpoint-sqlite",
  "@langchain/langgraph-checkpoint-postgres",
  "@langchain/core",
  "pg",
  "better-sqlite3",
  "ioredis",
];

/** Node's version and the installed version of each package the figures depend on. */
export function packageVersions(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const versions: Record<string, string> = { node: process.version };
  for (const name of PACKAGES) versions[name] = installedVersion(require, name);
  return versions;
}

/** The version in a package's package.json, found from its entry point (exports may hide it). */
function installedVersion(require: NodeJS.Require, name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    const entry = require.resolve(name);
    const root = entry.slice(0, entry.lastIndexOf(`/node_modules/${name}/`) + name.length + 14);
    return (require(`${root}/package.json`) as { version: string }).version;
  }
}
