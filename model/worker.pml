/*
 * One worker process: starts runs on the thread and carries a run through the MODEL and TOOL
 * steps. Every `atomic` block is one commit to the store or one step in memory; a crash may
 * fall between any two. Comments name the code each step stands for (model/README.md maps
 * them in full) and the code's fault points (`@fault <name>`, checked against
 * packages/core/src/node/fault-points.ts by tests/model/fault-points-match.test.ts).
 */

#ifdef PLANTED_BLIND_STEP_WRITE
#define CAS_OK (1) /* the step write overwrites whatever version is there */
#else
#define CAS_OK (version == myv) /* putCheckpoint: compare-and-swap on the version */
#endif

#ifdef PLANTED_UNFENCED_COMPLETION
#define FENCE_OK(c, a) (lst[c] == STARTED) /* checks the status but not whose attempt it is */
#else
#define FENCE_OK(c, a) (lst[c] == STARTED && latt[c] == (a)) /* completeCall's fence */
#endif

#ifdef PLANTED_UNFENCED_RIDE
#define RIDE_OK(c) (1)
#else
#define RIDE_OK(c) (cpc[c] != RIDE || FENCE_OK(c, catt[c]))
#endif

#ifdef PLANTED_FAIL_CLAIM_IN_STEP
#define CLAIM_IN_STEP(c) (1) /* every policy's claim rides in the MODEL step write */
#else
#define CLAIM_IN_STEP(c) (policy(c) == RETRY)
#endif

#define ACTIVE(c) \
  (cpc[c] == WAITING && (lst[c] == COMPLETED || lexp(c)) || \
   cpc[c] == INDOUBT && catt[c] < MAXATT /* bounded attempts: beyond, the call waits */ || \
   cpc[c] == CLAIMED || cpc[c] == RETURNED || cpc[c] == SETTLE)
#define DONE_OR_RIDING(c) (cpc[c] == SETTLED || cpc[c] == RIDE)
#define ALL_DONE (DONE_OR_RIDING(0) && DONE_OR_RIDING(1))
#define OTHER_SETTLED(c) (cpc[1 - (c)] == SETTLED)
/* The other call returned too (in the code: in the same turn of the event loop), so both ride. */
#define OTHER_RETURNED(c) (cpc[1 - (c)] == RETURNED || cpc[1 - (c)] == RIDE)

/* Everything a process holds in memory is lost when it crashes or its run ends. */
inline forget() {
  rid = 0;
  myv = 0;
  zombieMsg = 0;
  k = 0;
  do
  :: k < NC -> cpc[k] = UNPLANNED; catt[k] = 0; k++
  :: else -> break
  od;
  pc = IDLE
}

inline endRun() {
  runLive[rid] = 0;
  forget()
}

/* A committed versioned write. (3): a version is written once and only on top of the last. */
inline commitVersion() {
  assert(myv + 1 < MAXV); /* the model's bound, not an invariant */
  assert(INV3 && !written[myv + 1]);
  /* (5) nor does a run that another run's write superseded (a zombie) write at all */
  assert(INV5 && myv == version);
  written[myv + 1] = 1;
  version = myv + 1;
  myv = version
}

/* Run start (run-loop.ts execute: resolveStart loads, StepWriter.commit claims the version). Load and
 * start write are one step here: a write between them only makes the start write fail, which
 * is the same as this run starting later. */
inline startRun() {
  runs++;
  rid = runs;
  runLive[rid] = 1;
  myv = version;
  commitVersion();
  pc = (node == MODEL -> AT_MODEL : AT_TOOL)
}

/* The MODEL step's write (run-loop.ts #loop → StepWriter.commit): the assistant message with the calls,
 * currentNode = TOOL. v2: the claims of `retry` calls ride in it. */
inline modelStepWrite() {
  /* @fault step.before_write */
  if
  :: CAS_OK ->
    commitVersion();
    node = TOOL;
#ifdef V2
    k = 0;
    do
    :: k < NC ->
      if
      :: CLAIM_IN_STEP(k) ->
        /* New message ids: the keys are new, so this insert cannot meet an entry. */
        assert(lst[k] == NONE);
        lst[k] = STARTED; latt[k] = 1; lown[k] = rid;
        cpc[k] = PRECLAIMED; catt[k] = 1
      :: else -> skip
      fi;
      k++
    :: else -> break
    od;
#endif
    pc = AT_TOOL
    /* @fault step.after_write */
  :: else -> endRun() /* StaleStateError: the run ends, nothing written */
  fi
}

/* planFromEntry (claim.ts): what an existing entry means for the call. */
inline fromEntry(c) {
  if
  :: lst[c] == COMPLETED -> cpc[c] = SETTLED /* replayed */
#ifdef PLANTED_STALE_AS_NEW
  :: lst[c] == STARTED && lexp(c) && policy(c) == RETRY && latt[c] < MAXATT ->
    /* "retry runs it anyway": an abandoned retry claim is taken over with no in-doubt report */
    dead[c] = dead[c] | bit(latt[c]);
    retryOk[c] = retryOk[c] | (bit(latt[c] + 1) - 2);
    latt[c] = latt[c] + 1; lown[c] = rid; catt[c] = latt[c];
    cpc[c] = CLAIMED; reached[c] = 1
  :: lst[c] == STARTED && lexp(c) && policy(c) != RETRY -> cpc[c] = INDOUBT; catt[c] = latt[c]
#else
  :: lst[c] == STARTED && lexp(c) -> cpc[c] = INDOUBT; catt[c] = latt[c]
#endif
  :: lst[c] == STARTED && !lexp(c) -> cpc[c] = WAITING
  fi
}

/* planCalls (claim.ts): one transaction claims every call this run does not hold yet. */
inline planCalls() {
  k = 0;
  do
  :: k < NC ->
    if
    :: cpc[k] == PRECLAIMED -> cpc[k] = CLAIMED; reached[k] = 1 /* v2: held since the MODEL write */
    :: cpc[k] != PRECLAIMED && lst[k] == NONE ->
      /* expectedAttempt 0: an insert only one execution wins; it is the started mark */
      lst[k] = STARTED; latt[k] = 1; lown[k] = rid;
      cpc[k] = CLAIMED; catt[k] = 1; reached[k] = 1
#ifdef PLANTED_CLAIM_NOT_CAS
    :: cpc[k] != PRECLAIMED && lst[k] == STARTED && latt[k] < MAXATT ->
      /* an upsert that bumps the attempt whoever holds it */
      latt[k] = latt[k] + 1; lown[k] = rid;
      cpc[k] = CLAIMED; catt[k] = latt[k]; reached[k] = 1
#endif
    :: else -> fromEntry(k) /* the claim lost: the entry there decides */
    fi;
    k++
  :: else -> break
  od;
  pc = IN_TOOL
}

/* The policy runs the call again: every attempt up to the dead one `b` may have run, and the
 * policy accepts that (a second decider may overrule an answer lost in a crash). */
inline runAgain(c) {
  retryOk[c] = retryOk[c] | (bit(b + 1) - 2);
  cpc[c] = CLAIMED;
  reached[c] = 1
}

/* resolveInDoubt (in-doubt.ts): report, then claim the dead attempt (compare-and-swap) and
 * act on the policy. */
inline resolveInDoubt(c) {
  b = catt[c];
  surfaced[c] = surfaced[c] | bit(b);
  /* (4) with fail/decide, a call is reported in doubt only if a TOOL step was about to start it */
  assert(INV4 && (policy(c) == RETRY || reached[c]));
  if
  :: lst[c] == STARTED && latt[c] == b ->
    dead[c] = dead[c] | bit(b);
    latt[c] = b + 1; lown[c] = rid; catt[c] = b + 1;
    if
    :: policy(c) == RETRY -> runAgain(c)
    :: policy(c) == FAIL -> cpc[c] = SETTLE /* "outcome unknown", recorded */
    :: policy(c) == DECIDE -> /* reconcile() or a human: it happened, it failed, or run it */
      if
      :: runAgain(c)
      :: cpc[c] = SETTLE
      fi
    fi
  :: else -> fromEntry(c) /* another execution took it over first */
  fi
}

/* durable-call.ts durableCall → work.run (execute-call.ts runTool): the tool starts. Its
   effect counts from here. */
inline enterTool(c) {
  b = catt[c];
#ifdef LITERAL_INV1
  assert(INV1 && lst[c] != COMPLETED);
#else
  /* (1) recorded: no attempt starts it again, except one already declared dead (a zombie) */
  assert(INV1 && (lst[c] != COMPLETED || (dead[c] & bit(b))));
#endif
  /* (2) another attempt ran too: the earlier one was declared dead and its policy ran it again */
  k = 1;
  do
  :: k < 8 ->
    assert(INV2 && (k == b || !(began[c] & bit(k)) || (retryOk[c] & bit(k < b -> k : b))));
    k++
  :: else -> break
  od;
  began[c] = began[c] | bit(b);
  cpc[c] = RETURNED
  /* @fault tool.after_return */
}

/* record.ts recordResult → completeCall: fenced on the attempt. */
inline record(c) {
  b = catt[c];
  if
  :: FENCE_OK(c, b) ->
    /* (5) a zombie's completion is never visible */
    assert(INV5 && !(dead[c] & bit(b)));
    lst[c] = COMPLETED; lres[c] = b;
    cpc[c] = SETTLED
  :: else ->
#ifdef TODAY_FENCED_OUT
    /* execute-call.ts today: a fenced-out result is still the call's message */
    zombieMsg = zombieMsg | bit(c);
    cpc[c] = SETTLED
#else
    fromEntry(c) /* fenced out is a lost claim: the ledger decides (replay, wait, in doubt) */
#endif
  fi
  /* @fault ledger.after_record */
}

inline returned(c) {
#ifdef V2
  if
  :: OTHER_SETTLED(c) -> cpc[c] = RIDE /* the last call: its result rides in the step write */
  :: OTHER_RETURNED(c) -> cpc[c] = RIDE /* returned together with the last: rides too */
  :: OTHER_RETURNED(c) -> record(c) /* returned a turn before the other: recorded on its own */
  :: else -> record(c)
  fi
#else
  record(c)
#endif
}

inline callStep(c) {
  if
  :: cpc[c] == WAITING -> fromEntry(c) /* awaitClaim polls until recorded or abandoned */
  :: cpc[c] == INDOUBT -> resolveInDoubt(c)
  :: cpc[c] == CLAIMED -> enterTool(c)
  :: cpc[c] == RETURNED -> returned(c)
  :: cpc[c] == SETTLE -> record(c)
  fi
}

/* (4) at the TOOL step's commit, every attempt that ran is recorded or was reported in doubt. */
inline checkSurfaced() {
  k = 0;
  do
  :: k < NC ->
    b = 1;
    do
    :: b < 8 ->
      assert(INV4 && (!(began[k] & bit(b)) || (lst[k] == COMPLETED && lres[k] == b) ||
                      (surfaced[k] & bit(b))));
      b++
    :: else -> break
    od;
    k++
  :: else -> break
  od
}

/* The TOOL step's write: tool messages, currentNode = DONE. v2: the riding result commits in
 * the same transaction, fenced on its attempt like completeCall. */
inline toolStepWrite() {
  /* @fault step.before_write */
  if
  :: CAS_OK && RIDE_OK(0) && RIDE_OK(1) ->
    commitVersion();
    assert(INV3 && toolSteps == 0);
    /* (5) no message of an attempt that was fenced out reaches the transcript */
    assert(INV5 && zombieMsg == 0);
    toolSteps++;
    node = DONE;
    k = 0;
    do
    :: k < NC ->
      if
      :: cpc[k] == RIDE ->
        assert(INV5 && !(dead[k] & bit(catt[k])));
        lst[k] = COMPLETED; lres[k] = catt[k]; cpc[k] = SETTLED
      :: else -> skip
      fi;
      k++
    :: else -> break
    od;
    checkSurfaced();
    endRun()
    /* @fault step.after_write */
  :: else ->
    if
    :: cpc[0] == RIDE || cpc[1] == RIDE -> pc = FALLBACK
    :: else -> endRun() /* StaleStateError */
    fi
  fi
}

/* v2: the step write failed, but the call did return: record it on its own (fenced), so a live
 * run's result is not lost to a version conflict. */
inline fallbackRecord() {
  if
  :: cpc[0] == RIDE -> record(0)
  :: else -> skip
  fi;
  if
  :: cpc[1] == RIDE -> record(1)
  :: else -> skip
  fi;
  endRun()
}

proctype Worker() {
  byte pc = IDLE;
  byte rid; /* this worker's current run */
  byte myv; /* the version this run last wrote */
  byte cpc[NC]; /* per call phase */
  byte catt[NC]; /* attempt held, or the dead attempt seen in doubt */
  byte zombieMsg; /* calls whose message is a fenced-out attempt's result (TODAY_FENCED_OUT) */
  byte k, b; /* scratch inside one step, zeroed at its end so it adds no states */

end:
  do
  :: atomic { pc == IDLE && node != DONE && runs < MAXRUN -> startRun(); k = 0; b = 0 }
  :: atomic { pc != IDLE && crashes < MAXCRASH -> crashes++; endRun(); k = 0; b = 0 } /* SIGKILL */
  :: atomic { pc == AT_MODEL -> modelStepWrite(); k = 0; b = 0 }
  :: atomic { pc == AT_TOOL -> planCalls(); k = 0; b = 0 }
  :: atomic { pc == IN_TOOL && ACTIVE(0) -> callStep(0); k = 0; b = 0 }
  :: atomic { pc == IN_TOOL && ACTIVE(1) -> callStep(1); k = 0; b = 0 }
  :: atomic { pc == IN_TOOL && ALL_DONE -> toolStepWrite(); k = 0; b = 0 }
  :: atomic { pc == FALLBACK -> fallbackRecord(); k = 0; b = 0 }
  od
}
