/**
 * Private PostgreSQL and Redis servers for the tests, the chaos run and the bench: each in a
 * temporary directory of its own, on a free loopback port, that can be stopped, killed and
 * started again. The servers one vitest run shares are in `./vitest` (`test-services.ts`).
 * @module
 */
export { PostgresServer, createDatabase, postgresBinary } from "./postgres-server.js";
export type { PostgresServerOptions } from "./postgres-server.js";
export { RedisGate } from "./redis-gate.js";
export { RedisServer, pingRedis, redisCommand } from "./redis-server.js";
export type { RedisServerOptions } from "./redis-server.js";
export { startServers } from "./start-servers.js";
export type { ServerPair, StartServersOptions } from "./start-servers.js";
export { TestServer } from "./test-server.js";
export type { ServerCommand } from "./test-server.js";
export { childPids } from "./server-process.js";
