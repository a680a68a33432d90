/**
 * Patch markers (`wf.patched`) of the session engine, in one place. Each keeps histories recorded before its
 * change replaying exactly as they ran; a marker is removed only once no running workflow can lack it.
 */
/** Side effects run once without the per-host ledger, keyed by the workflow's own call id. */
export const TOOL_RUNS_ONCE = 'tool-runs-once';
/** Runs started before previous-run recovery existed replay without the extra activity. */
export const RECOVER_PREVIOUS_RUN = 'recover-previous-run';
/** An orphan user turn behind interrupted calls gets its marker; a failed load is reported. */
export const REPAIR_ORPHAN_BEHIND_RESULTS = 'repair-orphan-behind-results';
export const REPORT_LOST_PREVIOUS_RUN = 'report-lost-previous-run';
/** The agent loop stops once the same call has failed the same way MAX_IDENTICAL_ERRORS times in one turn. */
export const STOP_REPEATED_ERRORS = 'stop-repeated-errors';
/** A counted approval of a call that needs several edits the posted prompts (a new delivery). */
export const APPROVAL_PROGRESS = 'approval-progress';
/** Open gates kept in the memo (dialogs open without a worker); typed answers to several questions. */
export const GATE_MEMO = 'gate-memo';
export const TYPED_ANSWERS = 'typed-answers';
/** A mission run's gate shown in its owner's conversation is not superseded there; run gates get reminders. */
export const RUN_GATES_DECIDED_BY_RUN = 'run-gates-decided-by-run';
export const RUN_GATE_REMINDERS = 'run-gate-reminders';
/** A run's refused clicks are told in its owner's conversation. */
export const RUN_NOTICES_TO_OWNER = 'run-notices-to-owner';
/**
 * An activity that fails after its retries (settings, the policy check, a grant write, MCP discovery, a
 * delivery) becomes a message in the conversation and the session goes on; histories from before fail the
 * run (or the turn) as they did. Only the failure paths record it. In a mission: a schedule that cannot be
 * computed, or a run that cannot start, pauses the mission and is told.
 */
export const ACTIVITY_FAILURES_TOLD = 'activity-failures-told';
/** A model API that stays down after callModel's own retries: the turn waits (the message is kept). */
export const MODEL_OUTAGE_WAIT = 'model-outage-wait';
/** MCP tool lists are discovered again once older than `mcpRefreshAfter`. */
export const MCP_DISCOVERY_TTL = 'mcp-discovery-ttl';
/** The inbox refuses messages over its limits (told); the carried transcript is bounded. */
export const BOUNDED_INBOX = 'bounded-inbox';
export const BOUNDED_CARRY = 'bounded-carry';
/** Model requests are built within the policy's `contextTokens`, older turns summarised. */
export const CONTEXT_WINDOW = 'context-window';
/** Settings are read by a local activity (inside the workflow task), not a scheduled one. */
export const SETTINGS_LOCAL = 'settings-local-activity';
/**
 * Settings are read by a scheduled activity again: with the local one, a query (a web tab reading the view)
 * answered while it ran made the SDK finish the workflow task early, so what followed it was recorded in the
 * next task, which replay (no query then) does not reproduce: after a worker restart such sessions failed with
 * a nondeterminism error. Histories recorded with the local activity still replay with it.
 */
export const SETTINGS_SCHEDULED = 'settings-scheduled-activity';
/**
 * A new run reads the previous run's transcript and the settings in one activity (`loadRunOpening`), so its
 * first turn needs no settings activity of its own: one workflow task and one activity fewer per conversation.
 */
export const OPENING_IN_ONE_ACTIVITY = 'opening-in-one-activity';
/** A turn within a minute of the settings' last read uses them as they are (no activity). */
export const SETTINGS_REUSED = 'settings-reused';
/** `stop` typed while a turn runs stops it instead of queueing. */
export const TYPED_STOP = 'typed-stop';
/** Model usage is counted (turn, conversation, person per day) and budget limits open budget gates. */
export const BUDGETS = 'budgets';
/** Ratings of answers set the AgentFeedback search attribute. */
export const FEEDBACK = 'answer-feedback';
/**
 * A status or waiting line a run already wrote is not written again (each search attribute or memo upsert is a
 * visibility write on the server; a tool turn wrote its unchanged "waiting for" memo twice).
 */
export const VISIBILITY_UNCHANGED_SKIPPED = 'visibility-unchanged-skipped';
/**
 * A turn waits on its gates in one flat loop (one timer, one condition), which holds far fewer promises while it
 * is parked (workflows/session/gate-wait.ts); histories from before wait as they did.
 */
export const FLAT_GATE_WAIT = 'flat-gate-wait';
/** Patch markers of the mission workflow (workflows/missions/workflow.ts). */
/** Runs start as `missionRunWorkflow`; missions recorded before started `sessionWorkflow`. */
export const MISSION_RUN_TYPE = 'mission-run-type';
/** A run cancelled from outside fails the mission; a run that ends closes its gate shown to the owner. */
export const CANCELLED_RUN_FAILS = 'cancelled-run-fails-mission';
export const RUN_END_CLOSES_GATE = 'run-end-closes-gate';

/**
 * One marker for every patch above (workflows/versions.ts): a run that records it takes all of them as present
 * without a marker (and a TemporalChangeVersion upsert) each. Never add to BASELINE_PATCHES: a patch added later is
 * checked on its own, since runs recorded with this baseline predate it.
 */
export const PATCHES_BASELINE = 'patches-baseline-1';
export const BASELINE_PATCHES: readonly string[] = [
  TOOL_RUNS_ONCE,
  RECOVER_PREVIOUS_RUN,
  REPAIR_ORPHAN_BEHIND_RESULTS,
  REPORT_LOST_PREVIOUS_RUN,
  STOP_REPEATED_ERRORS,
  APPROVAL_PROGRESS,
  GATE_MEMO,
  TYPED_ANSWERS,
  RUN_GATES_DECIDED_BY_RUN,
  RUN_GATE_REMINDERS,
  RUN_NOTICES_TO_OWNER,
  ACTIVITY_FAILURES_TOLD,
  MODEL_OUTAGE_WAIT,
  MCP_DISCOVERY_TTL,
  BOUNDED_INBOX,
  BOUNDED_CARRY,
  CONTEXT_WINDOW,
  SETTINGS_LOCAL,
  SETTINGS_SCHEDULED,
  OPENING_IN_ONE_ACTIVITY,
  SETTINGS_REUSED,
  TYPED_STOP,
  BUDGETS,
  FEEDBACK,
  VISIBILITY_UNCHANGED_SKIPPED,
  FLAT_GATE_WAIT,
  MISSION_RUN_TYPE,
  CANCELLED_RUN_FAILS,
  RUN_END_CLOSES_GATE,
];

// Patches added after the baseline: each is asked about on its own, only where it matters.

/** A turn carried at a budget gate before its first model call is live, not an orphan (restore.ts). */
export const CARRIED_TURN_IS_LIVE = 'carried-turn-is-live';

/** A budget decision made while the run handed over is taken up by the next run (budget.ts). */
export const CARRIED_BUDGET_DECISION = 'carried-budget-decision';

/** A decision the previous run told (CarriedTurn.told) is not told again (gate-wait.ts). */
export const CARRIED_TOLD = 'carried-told';

/** A decision or answer that arrives after its gate's deadline expires the gate instead (session-run.ts). */
export const LATE_DECISION_EXPIRES = 'late-decision-expires';

/** A model reply's tool call ids that clash with earlier calls or gates (or each other) are renamed (call-ids.ts). */
export const DISTINCT_CALL_IDS = 'distinct-call-ids';
