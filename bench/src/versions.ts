import { createRequire } from "node:module";

/** Installed in `bench/langgraph`, the comparison's own npm project. */
const LANGGRAPH_PACKAGES = [
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-checkpoint-sqlite",
  "@langchain/langgraph-checkpoint-postgres",
  "@langchain/core",
];
const OUR_PACKAGES = ["pg", "better-sqlite3", "ioredis"];

/** Node's version and the installed version of each package the figures depend on. */
export function packageVersions(): Record<string, string> {
  const ours = createRequire(import.meta.url);
  const langgraph = createRequire(new URL("../langgraph/package.json", import.meta.url));
  const versions: Record<string, string> = { node: process.version };
  for (const name of LANGGRAPH_PACKAGES) versions[name] = installedVersion(langgraph, name);
  for (const name of OUR_PACKAGES) versions[name] = installedVersion(ours, name);
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
