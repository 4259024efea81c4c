import type { Agent, Dispatcher, errors, Pool } from 'undici';

/**
 * The parts of undici the proxy uses (its Agent and Pool, its errors, and
 * `request` on a dispatcher), each loaded from its own file. The package's
 * index loads all of undici (fetch, WebSocket, the cache and mock agents,
 * every handler): in Node 20, 100-120 ms and +21 MB of RSS at the first
 * upstream call, against 40 ms and +12 MB for these files (issue 19; most
 * of what is left is llhttp's WebAssembly). When a file is not where this
 * version of undici has it, the index is loaded instead.
 */
export interface UndiciParts {
  Agent: typeof Agent;
  Pool: typeof Pool;
  errors: typeof errors;
  /** `Dispatcher#request` (the index adds it to every dispatcher; here it is called on one). */
  request(dispatcher: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
}

/** A module path held in a variable, so TypeScript does not look for types undici does not ship. */
const load = (path: string): Promise<{ default: unknown }> => import(path);

async function fromFiles(): Promise<UndiciParts> {
  const [agent, pool, errs, request] = await Promise.all([
    load('undici/lib/dispatcher/agent.js'),
    load('undici/lib/dispatcher/pool.js'),
    load('undici/lib/core/errors.js'),
    load('undici/lib/api/api-request.js'),
  ]);
  const call = request.default as (
    this: Dispatcher,
    options: Dispatcher.RequestOptions,
  ) => Promise<Dispatcher.ResponseData>;
  const parts = {
    Agent: agent.default as typeof Agent,
    Pool: pool.default as typeof Pool,
    errors: errs.default as typeof errors,
    request: (dispatcher: Dispatcher, options: Dispatcher.RequestOptions) => call.call(dispatcher, options),
  };
  if (typeof parts.Agent !== 'function' || typeof parts.Pool !== 'function' || typeof call !== 'function')
    throw new Error('undici parts not where expected');
  if (typeof parts.errors?.RequestAbortedError !== 'function')
    throw new Error('undici errors not where expected');
  return parts;
}

async function fromIndex(): Promise<UndiciParts> {
  const undici = await import('undici');
  return {
    Agent: undici.Agent,
    Pool: undici.Pool,
    errors: undici.errors,
    request: (dispatcher, options) => dispatcher.request(options),
  };
}

let loading: Promise<UndiciParts> | undefined;

/** undici's parts, loaded once per process (see `UndiciParts`). */
export function undiciParts(): Promise<UndiciParts> {
  loading ??= fromFiles().catch(fromIndex);
  return loading;
}
