import { createRequire } from 'node:module';

/** The part of koffi (an optional dependency: a C FFI with prebuilt binaries) svc uses. */
interface Koffi {
  load(path: string): { func(declaration: string): (pad: number) => number };
}

let trim: ((pad: number) => number) | null | undefined;

/**
 * glibc's `malloc_trim`, bound through koffi on first use; null where there
 * is none: not Linux, a C library other than glibc (musl has no
 * `libc.so.6`, or no `malloc_trim` in it), or koffi not installed
 * (`npm install --omit=optional`).
 */
function bindMallocTrim(): ((pad: number) => number) | null {
  if (process.platform !== 'linux') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as Koffi;
    return koffi.load('libc.so.6').func('int malloc_trim(size_t pad)');
  } catch {
    return null;
  }
}

/**
 * Gives the pages glibc holds free back to the system (`malloc_trim(0)`, every
 * arena), after the idle collection (idle-gc.ts) has freed the buffers of a
 * burst of requests. glibc itself returns only the top of its heap, and only
 * past its trim threshold, which rises under load to twice the largest block
 * it has seen: after 30 s of ~91k-token bodies at c=10 it kept ~55 MB of free
 * pages (request bodies, the buffers made from them, V8's compiler zones)
 * for as long as the server stayed idle. Takes a few ms, once per idle period.
 * Returns whether it ran; false where there is no glibc `malloc_trim` to call.
 */
export function releaseFreedMemory(): boolean {
  if (trim === undefined) trim = bindMallocTrim();
  if (trim === null) return false;
  trim(0);
  return true;
}
