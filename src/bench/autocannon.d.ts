// The part of autocannon's API the load generator uses (the package ships no types, and a types
// package is not worth a dependency for five fields).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      overallRate?: number;
      duration?: number;
      headers?: Record<string, string>;
      ignoreCoordinatedOmission?: boolean;
      requests?: { setupRequest?: (request: Record<string, unknown>) => Record<string, unknown> }[];
    }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats?: Record<string, { count: number }>;
    }
    interface Instance extends PromiseLike<Result> {
      on(event: 'response', listener: (client: unknown, status: number, bytes: number, responseTime: number) => void): Instance;
      stop(): void;
    }
  }
  function autocannon(options: autocannon.Options): autocannon.Instance;
  export default autocannon;
}
