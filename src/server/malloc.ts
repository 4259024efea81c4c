import { createRequire } from 'node:module';

/** The part of koffi (an optional dependency: a C FFI with prebuilt binaries) svc uses. */
interface Koffi {
  load(path: string): { func(declaration: string): (a: number, b?: number) => number };
}

interface Libc {
  mallocTrim(pad: number): number;
  mallopt(param: number, value: number): number;
}

let libc: Libc | null | undefined;

/**
 * glibc's malloc controls, bound through koffi on first use; null where there
 * are none: not Linux, a C library other than glibc (musl has no
 * `libc.so.6`, or no `malloc_trim` in it), or koffi not installed
 * (`npm install --omit=optional`). Loading koffi takes ~6 ms and ~3 MB.
 */
function glibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== 'linux') return libc;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const lib = koffi.load('libc.so.6');
    const mallocTrim = lib.func('int malloc_trim(size_t pad)');
    const mallopt = lib.func('int mallopt(int param, int value)');
    libc = { mallocTrim: (pad) => mallocTrim(pad), mallopt: (param, value) => mallopt(param, value) };
  } catch {
    // no glibc, or no koffi: glibc's defaults, and nothing given back at idle
  }
  return libc;
}

/** glibc's `mallopt` parameters (malloc.h). */
const M_TRIM_THRESHOLD = -1;
const M_MMAP_THRESHOLD = -3;

/** Blocks of this size and more get a mapping of their own, unmapped when freed. */
export const MMAP_THRESHOLD = 512 * 1024;
/** Free memory past this at the top of an arena goes back to the system when a block is freed. */
export const TRIM_THRESHOLD = 1024 * 1024;

/** The same thresholds as glibc tunables, for a process's environment (`svc wrap`, `svc doctor`'s fix). */
export const MALLOC_TUNABLES = `glibc.malloc.mmap_threshold=${MMAP_THRESHOLD}:glibc.malloc.trim_threshold=${TRIM_THRESHOLD}`;

/** Whether this process runs on glibc (Linux), from Node's diagnostic report header. */
export function onGlibc(): boolean {
  if (process.platform !== 'linux') return false;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return Boolean(report?.header?.glibcVersionRuntime);
}

/** Whether svc can call glibc's malloc controls in this process (glibc Linux, koffi installed). */
export function mallocControls(): boolean {
  return glibc() !== null;
}

/** Whether the environment already sets glibc's malloc thresholds: the user's choice stands. */
export function mallocSetByEnv(env: NodeJS.ProcessEnv): boolean {
  return (
    /glibc\.malloc\.(mmap|trim)_threshold=/.test(env.GLIBC_TUNABLES ?? '') ||
    env.MALLOC_MMAP_THRESHOLD_ !== undefined ||
    env.MALLOC_TRIM_THRESHOLD_ !== undefined
  );
}

/**
 * Fixes glibc's thresholds for the server (as soon as it listens: src/server/app.ts),
 * unless the environment sets them. By default glibc raises both under load:
 * the mmap threshold to the largest mapped block freed so far (a request
 * body, then the 1-2.3 MB work areas of V8's optimizing compiler), the trim
 * threshold to twice that. From then on every such block comes from an
 * arena, and each of V8's helper threads keeps up to the trim threshold
 * (4.5 MB seen) free at the top of its arena for good; `malloc_trim` gives
 * back free pages inside every arena but that top only in the main one.
 * Fixed, blocks of half a MB and more are mapped and unmapped whole, and an
 * arena's top past 1 MiB goes back when a block is freed. The ~341 KB body of
 * a 91k-token conversation and the socket's chunks still come from the heap,
 * reused from request to request. Returns what it did: `set`, or why not
 * (`environment`: set there; `unavailable`: no glibc malloc controls, or
 * glibc refused a value).
 */
export function tuneMalloc(env: NodeJS.ProcessEnv = process.env): 'set' | 'environment' | 'unavailable' {
  if (mallocSetByEnv(env)) return 'environment';
  const c = glibc();
  if (!c) return 'unavailable';
  const set =
    c.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) === 1 && c.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) === 1;
  return set ? 'set' : 'unavailable';
}

/**
 * Gives the pages glibc holds free back to the system (`malloc_trim(0)`, every
 * arena), after the idle collection (idle-gc.ts) has freed the buffers of a
 * burst of requests. glibc itself returns only an arena's top, and only past
 * its trim threshold; the free pages between blocks still in use stay. After
 * 30 s of ~91k-token bodies at c=10 it kept ~55 MB of them for as long as the
 * server stayed idle. Takes a few ms, once per idle period. Returns whether
 * it ran; false where there is no glibc `malloc_trim` to call.
 */
export function releaseFreedMemory(): boolean {
  const c = glibc();
  if (!c) return false;
  c.mallocTrim(0);
  return true;
}
