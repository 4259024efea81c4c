// @ts-check
/**
 * Entry point: polls `/stats` (and `/metrics` for the ratio histogram) every
 * few seconds while the tab is visible, `/stats-history` less often, and shows
 * failures plainly. `?poll=MS` sets the interval (250 ms to 10 min; default 5 s).
 */
import { DashboardApiError, getJson, getText } from './api.js';
import { BreakdownTable } from './breakdown.js';
import { formatClock } from './format.js';
import { HistoryView } from './history.js';
import { fillFields, pick, RatioChart, renderBudget } from './live.js';
import { histogramBins } from './metrics.js';

const DEFAULT_POLL_MS = 5000;
/** History changes slowly: refetch it every this many polls, or when lifetime savings move. */
const HISTORY_EVERY = 6;

/** @param {string | null} raw */
function pollInterval(raw) {
  const ms = Number(raw);
  if (!raw || !Number.isFinite(ms)) return DEFAULT_POLL_MS;
  return Math.min(Math.max(Math.round(ms), 250), 600_000);
}

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

const pollMs = pollInterval(new URLSearchParams(location.search).get('poll'));
const status = byId('status');
const banner = byId('error');
const live = byId('live');
const history = new HistoryView(document);
const ratio = new RatioChart(document);
const breakdown = new BreakdownTable(document);
byId('poll-seconds').textContent = String(Math.round(pollMs / 100) / 10);

let ticks = 0;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
/** @type {AbortController | undefined} */
let inFlight;
/** @type {Date | undefined} */
let lastUpdate;
/** @type {unknown} */
let historyLifetime;

/** @param {unknown} err */
function describe(err) {
  return err instanceof Error ? err.message : String(err);
}

/** @param {unknown} err */
function showLiveError(err) {
  banner.hidden = false;
  const noAnswer = err instanceof DashboardApiError && err.status === undefined;
  byId('error-title').textContent = noAnswer ? 'svc is not answering.' : 'svc answered with an error.';
  byId('error-detail').textContent = `${describe(err)}. Retrying every ${Math.round(pollMs / 1000) || 1} s.`;
  live.classList.add('stale-data');
  status.classList.add('stale');
  status.textContent = lastUpdate ? `Last updated ${formatClock(lastUpdate)} (stale)` : 'No data yet';
}

/** @param {AbortSignal} signal */
async function refreshHistory(signal) {
  try {
    const record = await getJson('stats-history', signal);
    historyLifetime = JSON.stringify(pick(record, 'lifetime.tokens_saved'));
    history.setRecord(record);
  } catch (err) {
    if (!signal.aborted) history.setError(err instanceof Error ? err : new Error(String(err)));
  }
}

async function tick() {
  inFlight?.abort();
  const controller = new AbortController();
  inFlight = controller;
  const { signal } = controller;
  const metrics = getText('metrics', signal).then(
    (text) => histogramBins(text, 'service_compression_ratio'),
    () => null,
  );
  try {
    const stats = await getJson('stats', signal);
    fillFields(live, 'data-field', stats);
    renderBudget(document, pick(stats, 'budget'));
    breakdown.update(pick(stats, 'breakdown'));
    banner.hidden = true;
    live.classList.remove('stale-data');
    status.classList.remove('stale');
    lastUpdate = new Date();
    status.textContent = `Updated ${formatClock(lastUpdate)}`;
    const lifetime = JSON.stringify(pick(stats, 'persistent_savings.lifetime.tokens_saved'));
    if (ticks % HISTORY_EVERY === 0 || lifetime !== historyLifetime) await refreshHistory(signal);
  } catch (err) {
    if (signal.aborted) return;
    showLiveError(err);
    if (ticks === 0) await refreshHistory(signal);
  }
  const bins = await metrics;
  if (signal.aborted) return;
  ratio.update(bins);
  ticks += 1;
  document.documentElement.dataset.polls = String(ticks);
}

function schedule() {
  clearTimeout(timer);
  if (document.visibilityState === 'hidden') return;
  timer = setTimeout(() => void run(), pollMs);
}

async function run() {
  await tick();
  schedule();
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') {
    clearTimeout(timer);
    inFlight?.abort();
    status.textContent = 'Paused while this tab is hidden';
  } else {
    void run();
  }
});

// Charts take their colours from CSS variables: redraw them when the scheme flips.
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  history.render(true);
  ratio.redraw();
});

void run();
