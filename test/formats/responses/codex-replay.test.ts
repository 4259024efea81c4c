import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { arrayItemSpans, objectMemberSpans } from '../../../src/json/spans.js';
import { type MockUpstream, startMockUpstream, startSvc, type TestSvc, until } from '../../server/helpers.js';
import { responseEvents, sseOf, textItem } from './bodies.js';

/**
 * A Codex session (built from one dev case by scripts/codex-responses.js)
 * replayed request by request through `/v1/responses` with the real engine:
 * every forwarded request repeats the items the previous one forwarded,
 * byte for byte (the provider's prompt cache is never busted).
 */
interface Fixture {
  instructions: string;
  items: Array<Record<string, unknown>>;
  turns: number[];
}
const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/codex-session.json', import.meta.url), 'utf8'),
) as Fixture;

let svc: TestSvc;
let upstream: MockUpstream;
beforeAll(async () => {
  upstream = await startMockUpstream(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(sseOf(responseEvents([textItem('ok')])));
  });
  svc = await startSvc({ flags: { 'compat-api-url': `${upstream.url}/v1` } });
});
afterAll(async () => {
  await svc.close();
  await upstream.close();
});

/** The raw text of each forwarded input item, and of the members before `input`. */
function forwarded(text: string): { head: string; items: string[] } {
  const members = objectMemberSpans(text, text.indexOf('{'));
  const input = members.find((m) => m.key === 'input')!;
  const tools = members.find((m) => m.key === 'tools')!;
  const head = text.slice(0, input.value.start).replace(text.slice(tools.value.start, tools.value.end), '');
  return { head, items: arrayItemSpans(text, input.value.start).map((s) => text.slice(s.start, s.end)) };
}

it('a Codex session replayed through /v1/responses: compressed, and no forwarded item ever changes (0 busts)', async () => {
  let previous: string[] = [];
  let head: string | undefined;
  let busts = 0;
  for (const count of fixture.turns) {
    const body = {
      model: 'gpt-5-codex',
      instructions: fixture.instructions,
      tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
      store: false,
      stream: true,
      prompt_cache_key: 'codex-replay',
      input: fixture.items.slice(0, count),
    };
    const res = await fetch(`${svc.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    await res.text();
    const sent = forwarded(upstream.requests.at(-1)!.body.toString());
    expect(sent.items).toHaveLength(count);
    if (head !== undefined) expect(sent.head).toBe(head); // instructions and fields (tools aside) unchanged
    head = sent.head;
    if (previous.some((item, i) => sent.items[i] !== item)) busts += 1;
    previous = sent.items;
  }
  expect(busts).toBe(0);
  await until(() => svc.events.length === fixture.turns.length);
  expect(svc.events.every((e) => e.format === 'responses' && e.status === 200)).toBe(true);
  expect(svc.events.reduce((n, e) => n + (e.tokensSaved ?? 0), 0)).toBeGreaterThan(0);
});
