/** Leveled logger on stderr. Never give it message content or keys. */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  /**
   * False when lines of `level` are dropped: a caller on the request path
   * then need not build them. Absent: assume they are printed.
   */
  enabled?(level: LogLevel): boolean;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go; default process.stderr. */
  write?: (line: string) => void;
}

/** A logger printing `level message {fields}` lines at or above `level`. */
export function createLogger(options: LoggerOptions): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const max = RANK[options.level];
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (RANK[level] > max) return;
    const tail = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    write(`[svc] ${level.padEnd(5)} ${message}${tail}`);
  };
  return {
    error: (m, f) => emit('error', m, f),
    warn: (m, f) => emit('warn', m, f),
    info: (m, f) => emit('info', m, f),
    debug: (m, f) => emit('debug', m, f),
    enabled: (level) => RANK[level] <= max,
  };
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {}, enabled: () => false };
