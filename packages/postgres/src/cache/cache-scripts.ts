/**
 * The Lua scripts that update a thread's hash in Redis, each atomic on the server. The hash holds
 * one incarnation of a thread (`threads.incarnation`: a deleted thread's id may be reused, its
 * incarnation never is) with its latest durable checkpoint and, for runs with
 * `durableCheckpointEveryStep: false`, the latest step not yet written durably.
 */

/**
 * Stores the durable copy of a thread's checkpoint. A newer incarnation than the cached one
 * replaces the whole hash: what it held belonged to a deleted thread. An older one is refused: it
 * is a late write about a deleted thread. Within one incarnation the cache never moves backwards
 * (a slow writer cannot undo a newer version), and a cached step made from an older version is
 * superseded and dropped.
 * KEYS[1] the thread's hash; ARGV: version, incarnation, checkpoint JSON, TTL seconds. (The
 * version comes first: tests/crash/support/redis-gate.ts finds an update by it.)
 */
export const PUT_CHECKPOINT = `
local version = tonumber(ARGV[1])
local incarnation = tonumber(ARGV[2])
local cachedIncarnation = tonumber(redis.call('HGET', KEYS[1], 'incarnation'))
if cachedIncarnation and cachedIncarnation > incarnation then return 0 end
if cachedIncarnation == incarnation then
  local cached = tonumber(redis.call('HGET', KEYS[1], 'version'))
  if cached and cached >= version then return 0 end
  local base = tonumber(redis.call('HGET', KEYS[1], 'stepBase'))
  if base and base < version then redis.call('HDEL', KEYS[1], 'stepBase', 'stepNo', 'step') end
else
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 'incarnation', ARGV[2], 'version', ARGV[1], 'checkpoint', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1`;

/**
 * Stores a step that is not written durably, computed from durable version `base`, only while
 * the hash holds that very version: the step then belongs to the hash's incarnation, and a read
 * can check it against PostgreSQL's. Refused when the thread moved past `base`, when the hash
 * lacks the base (expired, dropped, or a refresh that failed: the run then writes the step
 * durably), or when a later step of the same base is already cached.
 * KEYS[1] the thread's hash; ARGV: base version, step number, step JSON, TTL seconds.
 */
export const PUT_STEP = `
local cached = tonumber(redis.call('HGET', KEYS[1], 'version'))
local base = tonumber(ARGV[1])
local step = tonumber(ARGV[2])
if cached ~= base then return 0 end
local oldBase = tonumber(redis.call('HGET', KEYS[1], 'stepBase'))
local oldStep = tonumber(redis.call('HGET', KEYS[1], 'stepNo'))
if oldBase and (oldBase > base or (oldBase == base and oldStep >= step)) then return 0 end
redis.call('HSET', KEYS[1], 'stepBase', ARGV[1], 'stepNo', ARGV[2], 'step', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1`;
