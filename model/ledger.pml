/*
 * The tool-ledger protocol of one thread, as a Promela model for spin. model/README.md states
 * the invariants, maps every step below to the code, and says how to run the check.
 *
 *   spin -a model/ledger.pml          v1: today's protocol (four commits per turn)
 *   spin -a -DV2 model/ledger.pml     v2: the planned protocol (last result and retry claims ride in step writes)
 *
 * Both treat a fenced-out record as a lost claim; -DTODAY_FENCED_OUT is the code as it was before
 * that fix, which kept the fenced-out result (model/README.md, Findings). A PLANTED_* macro breaks one rule on
 * purpose. model/check.sh expects spin to pass the protocols and to find each bug.
 *
 * The thread: a MODEL step writes the assistant message with NC tool calls, a TOOL step runs
 * them in parallel and writes their messages, then the thread is DONE. Two workers start runs
 * on it (a first run, a concurrent continuation, a restart after a crash); any run's heartbeat
 * may stop while it goes on acting (a zombie: frozen, partitioned, or just slow), after which
 * the leases of its claims may expire and another run takes them over. A worker may crash
 * between any two atomic steps, losing everything it held in memory, and then start again.
 */

/* Two parallel calls: c0 with policy retry, c1 with P1 (fail by default; -DP1=DECIDE for
 * reconcile or interrupt, whose answer may be "it happened", "it failed" or "run it again"). */
#define NC 2
#define RETRY 0
#define FAIL 1
#define DECIDE 2
#ifndef P1
#define P1 FAIL
#endif
#define policy(c) ((c) == 0 -> RETRY : P1)

#ifndef MAXRUN
#define MAXRUN 3 /* runs started on the thread, over both workers (at most 4: Environment names them) */
#endif
#ifndef MAXCRASH
#define MAXCRASH 1
#endif
#ifndef MAXZOMBIE
#define MAXZOMBIE 1
#endif
#define MAXV 14 /* versions: 1 + three writes per run */
#define MAXATT 7 /* attempts per call: bit masks below are bytes (bits 1..7) */
#define bit(a) (1 << (a))

/* Nodes of the thread. */
#define MODEL 0
#define TOOL 1
#define DONE 2

/* Ledger entry status (ledger-entry.ts): no entry, started, completed. */
#define NONE 0
#define STARTED 1
#define COMPLETED 2

/* Worker phases. */
#define IDLE 0
#define AT_MODEL 1 /* run started at the MODEL node */
#define AT_TOOL 2 /* run at the TOOL node, calls not planned yet */
#define IN_TOOL 3 /* calls planned, running */
#define FALLBACK 4 /* v2: the step write failed, record the riding result on its own */

/* Per-call phases inside a TOOL step (call-plan.ts). */
#define UNPLANNED 0
#define PRECLAIMED 1 /* v2: claimed in this run's MODEL step write */
#define WAITING 2 /* held by a live execution: wait (await-claim.ts) */
#define INDOUBT 3 /* started, holder gone: the policy decides (in-doubt.ts) */
#define CLAIMED 4 /* this run holds the attempt; the tool is about to start */
#define RETURNED 5 /* the tool returned; the result is in memory only */
#define SETTLE 6 /* in doubt, policy said fail / it happened: record that answer */
#define RIDE 7 /* v2: last result, waits for the step write */
#define SETTLED 8 /* has its tool message: recorded, replayed or fenced out */

/* The store: committed state only. */
byte version = 1; /* the thread exists, at the MODEL node */
byte node = MODEL;
byte lst[NC]; /* ledger entry status */
byte latt[NC]; /* latest attempt */
byte lown[NC]; /* run that made the latest claim */
byte lres[NC]; /* attempt whose result is recorded */

/* Runs, as the environment sees them. */
byte runs; /* run ids are 1..runs */
byte crashes;
byte zombies;
bool runLive[MAXRUN + 1]; /* started and neither crashed nor ended */
bool hbLost[MAXRUN + 1]; /* its heartbeats stopped although it still acts */
bool expired[MAXRUN + 1]; /* its claims' heartbeats are stale: the store reports them abandoned */

/* Ghosts: what happened, for the invariants only; the protocol never reads them. */
byte began[NC]; /* attempts that entered the tool (the effect: exec count = popcount) */
byte dead[NC]; /* attempts declared dead by a takeover */
byte retryOk[NC]; /* attempts declared dead by a takeover whose policy chose to run again */
byte surfaced[NC]; /* attempts reported in doubt */
bool reached[NC]; /* a TOOL step was about to start the call (its last commit before the tool) */
bool written[MAXV]; /* versions committed */
byte toolSteps; /* TOOL step writes committed */

/*
 * Invariant tags: spin prints a failed assertion's text, so each assertion names its invariant
 * (hidden: not part of the state vector). Numbers as in model/README.md.
 */
hidden byte INV1 = 1;
hidden byte INV2 = 1;
hidden byte INV3 = 1;
hidden byte INV4 = 1;
hidden byte INV5 = 1;

/* A run's claims stay fresh while it lives and heartbeats (run-watch.ts heartbeats them all at
 * once). Expiry is per run: a claim a run makes after its own expired counts as expired at once,
 * which only allows takeovers sooner than the code does: safe for a safety check. */
#define heartbeating(r) (runLive[r] && !hbLost[r])
#define lexp(c) (expired[lown[c]])
#define holds(r) (lst[0] == STARTED && lown[0] == (r) || lst[1] == STARTED && lown[1] == (r))

#include "worker.pml"
#include "environment.pml"

init {
  atomic {
    run Worker();
    run Worker();
    run Environment()
  }
}
