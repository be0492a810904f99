/** Where jobs say what they do. Progress goes to stderr so `--json` output on stdout stays clean. */
export type Progress = (message: string) => void;

export const stderrProgress: Progress = (message) => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
};

export const silent: Progress = () => undefined;

export interface Steps {
  /** One step done; `detail` says which (shown on the updating line, and on the sparse lines). */
  step(detail: string): void;
  /** Ends the updating line (a TTY keeps the last state on screen). */
  done(): void;
}

export interface StepsOptions {
  /** Rewrite one line in place (a terminal) or print sparse lines (a file, a pipe, --json). */
  tty: boolean;
  /** Where the updating line goes (default stderr). */
  write?: (text: string) => void;
  /** Milliseconds since some start; injected by tests. */
  clock?: () => number;
  /** Without a terminal: a line at most every this many ms, unless another tenth is done. */
  everyMs?: number;
}

/**
 * Progress of a long run of similar steps (a backfill of thousands of days): one line that updates
 * in place on a terminal, redrawn at most ten times a second; elsewhere a line at the start, at
 * every further tenth or `everyMs` (30 s), and at the end, so a log holds a dozen lines, not one
 * per step.
 */
export function steps(total: number, label: string, progress: Progress, options: StepsOptions): Steps {
  const write = options.write ?? ((text: string) => void process.stderr.write(text));
  const clock = options.clock ?? (() => performance.now());
  const everyMs = options.everyMs ?? 30_000;
  const started = clock();
  let doneCount = 0;
  let lastAt = -Infinity;
  let lastTenth = -1;
  let drawn = false;
  const line = (detail: string): string => {
    const share = total === 0 ? 1 : doneCount / total;
    const seconds = (clock() - started) / 1000;
    const left =
      doneCount > 0 && doneCount < total
        ? `, about ${Math.ceil((seconds / doneCount) * (total - doneCount))} s left`
        : '';
    return `${label} ${doneCount}/${total} (${Math.floor(share * 100)}%${left}) ${detail}`;
  };
  return {
    step(detail) {
      doneCount++;
      const now = clock();
      if (options.tty) {
        if (now - lastAt < 100 && doneCount < total) return;
        lastAt = now;
        write(`\r\x1b[2K${bar(doneCount, total)} ${line(detail)}`);
        drawn = true;
        return;
      }
      const tenth = total === 0 ? 10 : Math.floor((doneCount * 10) / total);
      if (doneCount === 1 || doneCount === total || tenth > lastTenth || now - lastAt >= everyMs) {
        lastAt = now;
        lastTenth = tenth;
        progress(line(detail));
      }
    },
    done() {
      if (options.tty && drawn) write('\n');
    },
  };
}

function bar(done: number, total: number, width = 24): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/**
 * A count with thousands separators, as `toLocaleString('en-US')` writes it, without Intl: a
 * process's first Intl number format loads ICU's locale data, a noticeable part of a small score
 * run.
 */
export function grouped(n: number): string {
  const [whole = '', fraction] = String(Math.abs(n)).split('.');
  const digits = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return `${n < 0 ? '-' : ''}${digits}${fraction === undefined ? '' : `.${fraction}`}`;
}
