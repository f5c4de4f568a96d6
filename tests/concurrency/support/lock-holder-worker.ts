/**
 * A process that takes SQLite's write lock on the database file with better-sqlite3 directly
 * (`BEGIN IMMEDIATE`, as another program or a long write would) and keeps it until the parent
 * says `release`: a lock that lasts exactly as long as a test wants, with no timing involved.
 */
import Database from "better-sqlite3";
import { report, workerParams } from "../../support/worker-process.js";
import { nextCommand } from "./worker-commands.js";

/** The parameters of a lock holder. */
export interface LockHolderParams {
  dbPath: string;
}

const { dbPath } = workerParams<LockHolderParams>();
const db = new Database(dbPath);
await report({ type: "ready" });
for (;;) {
  const command = await nextCommand("lock", "release", "exit");
  if (command.type === "exit") break;
  if (command.type === "lock") {
    db.exec("BEGIN IMMEDIATE");
    await report({ type: "locked" });
  } else {
    db.exec("COMMIT");
    await report({ type: "released" });
  }
}
db.close();
process.exit(0);
