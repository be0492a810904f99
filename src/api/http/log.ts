import type { FastifyBaseLogger } from 'fastify';

/**
 * Fastify's logger (pino) for a serve process: every line one JSON line of pino's shape. A line
 * of a request (its child logger adds `reqId`) is the request log, on stdout when it is asked for;
 * the API's own lines (the snapshot it serves, its pack, its page cache, its rate limits) go to
 * stderr, where the process's other lines are. Both through the process's streams, whose write
 * errors (a log on a full disk) the process ignores (src/jobs/output.ts): pino's own stream would
 * end the process on the first one.
 */
export function loggerOptions(requestLog: boolean): { level: string; stream: { write(line: string): void } } {
  return {
    level: 'info',
    stream: {
      write(line: string): void {
        // pino escapes quotes inside values: only a field named reqId reads as this
        if (line.includes('"reqId":')) {
          if (requestLog) process.stdout.write(line);
        } else process.stderr.write(line);
      },
    },
  };
}

type Level = 'info' | 'warn' | 'error';

/**
 * The API's own lines, said through the app's logger. The snapshot is opened (and says what it
 * found) before the app that logs is built: those lines are held and said once it is attached.
 */
export class ApiLines {
  private logger: FastifyBaseLogger | null = null;
  private held: [Level, string][] = [];

  readonly info = (line: string): void => this.say('info', line);
  readonly warn = (line: string): void => this.say('warn', line);
  readonly error = (line: string): void => this.say('error', line);

  attach(logger: FastifyBaseLogger): void {
    this.logger = logger;
    for (const [level, line] of this.held.splice(0)) logger[level](line);
  }

  private say(level: Level, line: string): void {
    if (this.logger) this.logger[level](line);
    else if (this.held.length < MAX_HELD) this.held.push([level, line]);
  }
}

/** Lines held before the app exists: a snapshot's opening says a few. */
const MAX_HELD = 1000;
