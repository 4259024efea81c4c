/**
 * CPU time of another process, for the benches (Linux /proc).
 *
 * `/proc/PID/stat` gives user and system time in clock ticks of 10 ms, so a
 * request that costs 1.4 ms reads as 0 or 10: averaged over 50 requests that
 * is unbiased, but its spread (~0.5 ms) is as large as the differences the
 * benches look for. `/proc/PID/task/TID/schedstat` gives each thread's time on
 * a CPU in nanoseconds; their sum is the process's CPU time, user and system,
 * to the microsecond. Time of a thread that has exited is not in it (the
 * proxies under test keep their threads: V8's and libuv's pools), so a
 * reading is only ever compared with one of the same process a little
 * earlier. Where schedstat is not available (a kernel without
 * CONFIG_SCHED_INFO) the ticks are read instead.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

/** CPU time of `pid` from /proc/PID/stat: user + system, all threads (exited ones too), in 10 ms steps. */
export function cpuTicksMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

let precise;

/** CPU time of `pid` in ms: the sum of its threads' schedstat, else `cpuTicksMs`. */
export function cpuMs(pid) {
  if (precise !== false) {
    try {
      let ns = 0;
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
        } catch (error) {
          if (error.code !== 'ENOENT' && error.code !== 'ESRCH') throw error; // the thread exited meanwhile
        }
      }
      // A kernel that keeps no run times reads 0 for a process that has run.
      precise ??= ns > 0;
      if (precise) return ns / 1e6;
    } catch {
      precise = false;
    }
  }
  return cpuTicksMs(pid);
}
