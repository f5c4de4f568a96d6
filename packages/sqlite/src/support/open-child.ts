/**
 * Run in a child process by open-database.int.test.ts, so that a setup() that hangs (it blocks
 * the event loop) is killed by the parent's timeout instead of hanging the suite. Opens a
 * SqliteCheckpointer on the path given (`path <file>`), or on the default path after deleting
 * the working directory (`deleted-cwd <folder>`), and prints how setup() ended as JSON.
 */
import { rmSync } from "node:fs";
import { SqliteCheckpointer } from "../index.js";

const [mode, arg] = process.argv.slice(2) as [string, string];
if (mode === "deleted-cwd") {
  process.chdir(arg);
  rmSync(arg, { recursive: true });
}
const store = new SqliteCheckpointer(mode === "path" ? { path: arg } : {});
try {
  await store.setup();
  console.log(JSON.stringify({ code: null, message: "opened" }));
} catch (error) {
  const { code, message } = error as { code?: unknown; message?: unknown };
  console.log(JSON.stringify({ code, message }));
} finally {
  await store.close();
}
