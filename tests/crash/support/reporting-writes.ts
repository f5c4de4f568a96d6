import type { Checkpointer, CheckpointWrite } from "@tenxgraph/core/storage";
import { report } from "../../support/worker-process.js";

/**
 * The store with every committed thread write reported to the parent (`write`: the version
 * `putCheckpoint` or `commitStep` returned, with the thread, status and node it wrote; a
 * subgraph writes its child threads through the same store) before the run
 * goes on. The version comes from the write itself, not from reading the thread afterwards:
 * with other processes on the same thread, what is stored a moment later may be their write.
 */
export function reportingWrites(store: Checkpointer): Checkpointer {
  const reported = (version: number, write: CheckpointWrite) =>
    report({
      type: "write",
      threadId: write.threadId,
      version,
      status: write.status,
      currentNode: write.currentNode,
    });
  return new Proxy(store, {
    get(target, property) {
      if (property === "putCheckpoint") {
        const put: Checkpointer["putCheckpoint"] = async (write) => {
          const version = await target.putCheckpoint(write);
          await reported(version, write);
          return version;
        };
        return put;
      }
      if (property === "commitStep" && target.commitStep) {
        const commit: NonNullable<Checkpointer["commitStep"]> = async (write) => {
          const committed = await target.commitStep!(write);
          await reported(committed.version, write);
          return committed;
        };
        return commit;
      }
      // Called on the store itself: checkpointers keep their state in #private fields.
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
