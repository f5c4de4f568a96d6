/**
 * A process that copies one thread when told to, for the SIGKILL-mid-copy test: it opens the
 * store, says `ready`, and on `go` says `copying` (once the message is handed to the OS) and
 * calls `copyThread`, then says `copied`. The test kills it somewhere in between.
 */
import { report, workerParams, type WorkerMessage } from "../../support/worker-process.js";
import { openStore, type StoreSpec } from "../../support/store-spec.js";

const { spec, from, to } = workerParams<{ spec: StoreSpec; from: string; to: string }>();
const checkpointer = openStore(spec);
await checkpointer.setup();

process.on("message", (message: WorkerMessage) => {
  if (message.type !== "go") return;
  void (async () => {
    await report({ type: "copying" });
    await checkpointer.copyThread(from, to);
    await report({ type: "copied" });
  })();
});
await report({ type: "ready" });
