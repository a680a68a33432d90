/** Structured JSON logs, one line per event, with the workflow id where there is one. Never log secrets. */
type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(
  component: string,
  minimum: Level = (process.env.LOG_LEVEL as Level) || 'info',
): Logger {
  const write = (level: Level) => (message: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < (ORDER[minimum] ?? 20)) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level, component, message, ...fields });
    (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(`${line}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
