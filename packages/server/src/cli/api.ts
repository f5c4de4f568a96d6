import { loadProject } from "../load-project.js";
import { serve } from "../serve.js";

/** Where `api` and `dev` listen and which config they read. */
export interface ServeArgs {
  config: string | undefined;
  host: string;
  port: number;
}

/**
 * `tenxgraph api`: loads the project and serves it until SIGTERM/SIGINT, then stops taking
 * requests, lets runs and streams in progress end, closes the checkpointer and exits.
 */
export async function runApi(args: ServeArgs): Promise<void> {
  const project = await loadProject(process.cwd(), args.config);
  const server = await serve({ ...project.options, host: args.host, port: args.port });
  console.log(`tenxgraph: serving ${project.configPath} on ${server.url}`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`tenxgraph: ${signal}: finishing requests in progress`);
    void server
      .close()
      .then(() => project.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          console.error("tenxgraph: shutdown failed:", error);
          process.exit(1);
        },
      );
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}
