/** Stable error codes; messages name the thing, the reason and the fix. */
export enum ErrorCode {
  ConfigInvalid = 'CONFIG_INVALID',
  TemporalUnreachable = 'TEMPORAL_UNREACHABLE',
  TemporalCliMissing = 'TEMPORAL_CLI_MISSING',
}

export class AgentError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentError';
  }
}

/** Failure types as they show in the Temporal UI; activities throw them, workflows branch on them. */
export const FailureType = {
  ModelAuth: 'ModelAuthError',
  ModelNotFound: 'ModelNotFound',
  ModelBadRequest: 'ModelBadRequest',
  /** The request did not fit the model's context window: the session summarises and tries once more. */
  ContextTooLong: 'ContextTooLong',
  /** A tool run that failed before its side effect could start: the workflow may run it again. */
  ToolNotStarted: 'ToolNotStarted',
  /** A tool run cut off (worker shutdown) after its side effect may have started: never run again. */
  ToolInterrupted: 'ToolInterrupted',
} as const;
