/**
 * What a turn and its steps see of the conversation's engine: the state, the gates' owner, the settings and the few
 * acts a step may take (status, outbound events, a hand-over mid-wait). `SessionRun` implements it; the step
 * modules (turn, tool-step, model-step, gate-wait, budget, server-questions, restore) take this, never the class,
 * so the engine's files form a tree: the run at the top, the steps under it.
 */
import type { SessionStatus } from '../../common/search-attributes';
import type { CarriedTurn, SessionInput } from './contract';
import type { DayLedger } from './day-ledger';
import type { Gates } from './gate-owner';
import type { McpTools } from './mcp-tools';
import type { OutboundEvent } from './outbound';
import type { SessionSettings } from './settings';
import type { SessionState } from './state';
import type { TranscriptChunks } from './transcript-chunks';

/** A turn as the run plays it: Stop cancels it (turn.ts's Turn). */
export interface PlayableTurn {
  readonly requesterId: string;
  readonly stoppedBy: string | undefined;
  play(done: () => void): Promise<void>;
  stop(by: string): void;
}

/** A turn as a step sees it: whose it is, which step, and itself as data to carry across continue-as-new. */
export interface TurnInProgress {
  readonly requesterId: string;
  readonly step: number;
  carry(): CarriedTurn;
}

export interface Session {
  readonly sessionId: string;
  readonly input: SessionInput;
  readonly state: SessionState;
  /** The one owner of this conversation's gates (gate-owner.ts). */
  readonly gates: Gates;
  readonly mcp: McpTools;
  readonly ledger: DayLedger;
  readonly transcriptChunks: TranscriptChunks;
  /** Set when this is a mission run: its one turn is the goal, its result goes back to the mission. */
  readonly runOf: SessionInput['run'];
  /** Slack and Discord are told through the outbox; the web chat reads state. */
  readonly emitsToPlatform: boolean;
  readonly settings: SessionSettings;
  readonly continuingAsNew: boolean;
  setStatus(status: SessionStatus, waitingFor?: string): void;
  emit(event: OutboundEvent): void;
  /** A mission run did not reach its goal: the mission is told why. */
  fail(reason: string): void;
  play(turn: PlayableTurn, after?: () => void): Promise<void>;
  refreshSettings(): Promise<void>;
  useSettings(settings: SessionSettings): void;
  shouldContinueAsNew(): boolean;
  handOverMidWait(turn: CarriedTurn): Promise<never>;
}
