import { SvcError } from '../errors.js';

/**
 * The engine's time budget (issue 15): the caller passes a clock
 * (`EngineDeps.clock`) and a deadline on it (`EngineOptions.deadline`); the
 * engine checks it between steps and throws `EngineTimeoutError` once past
 * it. The engine stays pure: it never reads a clock of its own, and what it
 * returns does not depend on the clock (it either finishes or throws).
 */
export interface Deadline {
  /** Throws `EngineTimeoutError` when the deadline has passed; `step` names where. */
  check(step: string): void;
}

/** Thrown by the engine past its deadline; the proxy then forwards the original request (principle 1). */
export class EngineTimeoutError extends SvcError {
  constructor(step: string, overMs: number) {
    super('SVC_ENGINE_TIMEOUT', `engine time budget exceeded (at ${step}, ${Math.round(overMs)} ms over)`, {
      details: { step },
    });
  }
}

/** A deadline that never passes: no deadline or no clock given. */
const NEVER: Deadline = { check: () => {} };

/**
 * The deadline of one engine call.
 *
 * @example
 * const deadline = deadlineOf(Date.now() + 2000, Date.now);
 * deadline.check('router'); // throws EngineTimeoutError after 2 s
 */
export function deadlineOf(at: number | undefined, clock: (() => number) | undefined): Deadline {
  if (at === undefined || clock === undefined) return NEVER;
  return {
    check(step: string): void {
      const now = clock();
      if (now > at) throw new EngineTimeoutError(step, now - at);
    },
  };
}
