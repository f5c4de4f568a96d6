import type { WorkerMessage, WorkerProcess } from "../../support/worker-process.js";

/**
 * The parent's side of the command channel: `WorkerProcess` carries reports up; commands go
 * down the same IPC channel, so a test can release several workers at (nearly) one moment.
 */
export function sendCommand(worker: WorkerProcess, command: WorkerMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    worker.child.send(command, (error: Error | null) => (error ? reject(error) : resolve()));
  });
}

/**
 * Sends `command` to `worker` and resolves with the first report of `type` it sends after
 * that; earlier reports of the same type (from earlier commands) do not count.
 */
export async function request(
  worker: WorkerProcess,
  command: WorkerMessage,
  type: string,
): Promise<WorkerMessage> {
  const seen = worker.messages.length;
  const reply = worker.waitFor(
    (message) => message.type === type && worker.messages.indexOf(message) >= seen,
  );
  await sendCommand(worker, command);
  return reply;
}

const inbox: WorkerMessage[] = [];
const waiting = new Set<() => void>();
let listening = false;

/**
 * In a worker: the next command from the parent whose `type` is one of `types`. Commands that
 * arrive before anyone waits for them are kept, so a fast parent cannot lose one.
 */
export function nextCommand(...types: string[]): Promise<WorkerMessage> {
  listen();
  return new Promise((resolve) => {
    const check = () => {
      const index = inbox.findIndex((message) => types.includes(message.type));
      if (index === -1) return;
      waiting.delete(check);
      resolve(inbox.splice(index, 1)[0]!);
    };
    waiting.add(check);
    check();
  });
}

function listen(): void {
  if (listening) return;
  listening = true;
  process.on("message", (message) => {
    inbox.push(message as WorkerMessage);
    for (const check of [...waiting]) check();
  });
  // An orphaned worker (the test runner died) must not linger holding the database open.
  process.on("disconnect", () => process.exit(1));
}
