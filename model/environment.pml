/*
 * What no worker controls: a run's heartbeats stop while it goes on (the zombie), and the
 * store's clock lets the lease of a claim run out once its owner no longer heartbeats
 * (claim.ts isAbandoned: heartbeatAgeMs > claimStaleAfterMs, or a run here that ended).
 * An expired lease stays expired in the model, which allows more takeovers than the code
 * (where a late heartbeat refreshes it): safe for a safety check.
 */

/* Only a run holding a claim: losing heartbeats matters for nothing else, and any later moment
 * is covered by interleaving. */
#define ZOMBIE(r) :: atomic { zombies < MAXZOMBIE && heartbeating(r) && holds(r) -> hbLost[r] = 1; zombies++ }
#define EXPIRE(r) :: atomic { !expired[r] && !heartbeating(r) && holds(r) -> expired[r] = 1 }

proctype Environment() {
end:
  do
  ZOMBIE(1)
  ZOMBIE(2)
  ZOMBIE(3)
#if MAXRUN > 3
  ZOMBIE(4)
  EXPIRE(4)
#endif
  EXPIRE(1)
  EXPIRE(2)
  EXPIRE(3)
  od
}
