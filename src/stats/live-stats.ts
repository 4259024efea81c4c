import type { RequestFinishedEvent, RequestMode } from '../events.js';
import type { RequestCost } from './cost.js';
import { countsAsSaving } from './cost.js';
import type { Checkpoint } from './savings-data.js';

/** Bound of the session `savings_history` (one point per minute with savings). */
export const SESSION_HISTORY_MAX = 120;

/** `/health`'s `stats` block; equal to the matching `/stats` fields. */
export interface HealthStats {
  total_requests: number;
  tokens_saved: number;
  savings_percent: number;
}

/** Session counters of one server instance (since it started). */
export interface LiveTotals {
  requests: {
    total: number;
    cached: number;
    rate_limited: number;
    /** Answered with status >= 400 (rate-limited requests excluded: they have their own count). */
    failed: number;
    /** Compression threw and the original was forwarded (fail-open). */
    compression_failed: number;
    by_mode: Record<RequestMode, number>;
    /** Retrieval continuations svc sent upstream (answering svc_retrieve); counted in their requests. */
    retrieval_rounds: number;
  };
  tokens: {
    /** Tokens of the whole requests clients sent (system, tools, messages), counted before compression. */
    input: number;
    /** Output tokens the upstream reported. */
    output: number;
    /** Tokens compression removed, of requests answered (status < 400) and not from the cache. */
    saved: number;
    /** saved / input x 100, two decimals. */
    savings_percent: number;
    /** Tokens of the whole requests as forwarded (counted). */
    sent: number;
    /** Tokens svc added to forwarded requests (its svc_retrieve definition): input - sent = saved - added. */
    added: number;
    /** Cache-read and cache-write input tokens the upstream reported. */
    cache_read: number;
    cache_write: number;
    /** Of `sent`, the tokens of svc's retrieval continuations (taken off `saved` of their requests). */
    retrieval: number;
  };
  cost: {
    total_cost_usd: number;
    total_savings_usd: number;
    /** Billed requests without reported usage: their cost is the counted input only. */
    estimated_requests: number;
    /** Requests for models without a known price: not in the USD totals. */
    unpriced_requests: number;
    /**
     * Cache-aware USD saved: the estimate of each request without svc (its
     * conversation's prompt cache modelled) less what it was billed; negative
     * when svc cost more. Over `cache_aware_requests` requests (docs/stats.md).
     */
    cache_aware_savings_usd: number;
    cache_aware_requests: number;
  };
  /**
   * `--observe`: what compression would have saved on the requests forwarded
   * untouched; not real savings (nothing was removed), never in `tokens.saved`
   * or `cost`.
   */
  projected: {
    requests: number;
    /** Whole requests as sent (the denominator of `savings_percent`). */
    tokens_input: number;
    tokens_saved: number;
    savings_percent: number;
    /** Cache-aware USD it would have saved (known models). */
    savings_usd: number;
    unpriced_requests: number;
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const roundUsd = (n: number) => Math.round(n * 1e10) / 1e10;

function zeroModes(): Record<RequestMode, number> {
  return { optimize: 0, passthrough: 0, cached: 0, bypass: 0, compress: 0, rejected: 0 };
}

/** The live counters behind `/stats`, `/health` and `svc stats`. */
export class LiveStats {
  private readonly t: LiveTotals = {
    requests: {
      total: 0,
      cached: 0,
      rate_limited: 0,
      failed: 0,
      compression_failed: 0,
      by_mode: zeroModes(),
      retrieval_rounds: 0,
    },
    tokens: {
      input: 0,
      output: 0,
      saved: 0,
      savings_percent: 0,
      sent: 0,
      added: 0,
      cache_read: 0,
      cache_write: 0,
      retrieval: 0,
    },
    cost: {
      total_cost_usd: 0,
      total_savings_usd: 0,
      estimated_requests: 0,
      unpriced_requests: 0,
      cache_aware_savings_usd: 0,
      cache_aware_requests: 0,
    },
    projected: {
      requests: 0,
      tokens_input: 0,
      tokens_saved: 0,
      savings_percent: 0,
      savings_usd: 0,
      unpriced_requests: 0,
    },
  };
  /** Session savings points, their time in ms (an ISO string is made when they are read). */
  private readonly history: Array<{ time: number; saved: number; usd: number }> = [];

  /** Counts one finished request, priced by the caller. */
  apply(event: RequestFinishedEvent, cost: RequestCost): void {
    const { requests, tokens } = this.t;
    requests.total += 1;
    requests.by_mode[event.mode] = (requests.by_mode[event.mode] ?? 0) + 1;
    if (event.cached) requests.cached += 1;
    if (event.rateLimited) requests.rate_limited += 1;
    else if (event.status >= 400) requests.failed += 1;
    if (event.compressionFailed) requests.compression_failed += 1;
    tokens.input += event.tokensBefore;
    tokens.sent += event.tokensAfter;
    tokens.added += event.tokensAdded ?? 0;
    tokens.retrieval += event.retrievalTokens ?? 0;
    requests.retrieval_rounds += event.retrievalRounds?.length ?? 0;
    if (countsAsSaving(event)) tokens.saved += event.tokensSaved;
    tokens.savings_percent = tokens.input > 0 ? round2((tokens.saved / tokens.input) * 100) : 0;
    if (event.usage) {
      tokens.output += event.usage.output;
      tokens.cache_read += event.usage.cacheRead;
      tokens.cache_write += event.usage.cacheWrite;
    }
    this.applyCost(event, cost);
    this.applyProjected(event);
  }

  private applyProjected(event: RequestFinishedEvent): void {
    const p = event.projected;
    if (!p) return;
    const t = this.t.projected;
    t.requests += 1;
    t.tokens_input += event.tokensBefore;
    t.tokens_saved += p.tokensSaved;
    t.savings_percent = t.tokens_input > 0 ? round2((t.tokens_saved / t.tokens_input) * 100) : 0;
    if (p.savingsUsd === undefined) t.unpriced_requests += 1;
    else t.savings_usd = roundUsd(t.savings_usd + p.savingsUsd);
  }

  private applyCost(event: RequestFinishedEvent, cost: RequestCost): void {
    const c = this.t.cost;
    if (cost.costUsd === undefined || (countsAsSaving(event) && cost.savingsUsd === undefined))
      c.unpriced_requests += 1;
    if (cost.costUsd !== undefined) c.total_cost_usd = roundUsd(c.total_cost_usd + cost.costUsd);
    if (cost.estimated) c.estimated_requests += 1;
    if (cost.savingsUsd !== undefined) c.total_savings_usd = roundUsd(c.total_savings_usd + cost.savingsUsd);
    if (event.cacheAwareSavingsUsd !== undefined) {
      c.cache_aware_savings_usd = roundUsd(c.cache_aware_savings_usd + event.cacheAwareSavingsUsd);
      c.cache_aware_requests += 1;
    }
    if (countsAsSaving(event)) this.checkpoint(event.time.getTime());
  }

  private checkpoint(now: number): void {
    const saved = this.t.tokens.saved;
    const usd = this.t.cost.total_savings_usd;
    const last = this.history.at(-1);
    if (last && Math.floor(last.time / 60_000) >= Math.floor(now / 60_000)) {
      last.saved = saved;
      last.usd = usd;
      if (now > last.time) last.time = now;
    } else this.history.push({ time: now, saved, usd });
    if (this.history.length > SESSION_HISTORY_MAX) this.history.shift();
  }

  /** A copy of the counters. */
  totals(): LiveTotals {
    return structuredClone(this.t);
  }

  /** Session savings points: cumulative session totals, at most one per minute, last 120. */
  sessionHistory(): Checkpoint[] {
    return this.history.map((p) => ({
      timestamp: new Date(p.time).toISOString(),
      total_tokens_saved: p.saved,
      compression_savings_usd: p.usd,
    }));
  }

  /** The `/health` stats block. */
  health(): HealthStats {
    return {
      total_requests: this.t.requests.total,
      tokens_saved: this.t.tokens.saved,
      savings_percent: this.t.tokens.savings_percent,
    };
  }
}
