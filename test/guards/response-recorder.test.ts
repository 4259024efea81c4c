import { describe, expect, it } from 'vitest';
import { createResponseRecorder, type StreamFormat } from '../../src/guards/response-recorder.js';

const MESSAGES_SSE = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"héllo"}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
];
const CHAT_SSE = ['data: {"choices":[{"delta":{"content":"hi"}}]}\n\n', 'data: [DONE]\n\n'];

const recorder = (format: StreamFormat, status = 200, maxBytes = 1 << 20) =>
  createResponseRecorder({
    format,
    status,
    headers: { 'content-type': 'text/event-stream' },
    model: 'm',
    maxBytes,
    now: () => 42,
  });

describe('stream recorder', () => {
  it.each([
    ['messages', MESSAGES_SSE],
    ['chat', CHAT_SSE],
  ] as const)('keeps a complete %s stream byte for byte', (format, events) => {
    const r = recorder(format);
    // Split inside events and inside a multi-byte character.
    const bytes = Buffer.from(events.join(''));
    for (let i = 0; i < bytes.length; i += 7) r.push(bytes.subarray(i, i + 7));
    const entry = r.finish();
    expect(entry?.mode).toBe('sse');
    expect(entry?.body.equals(bytes)).toBe(true);
    expect(entry?.storedAt).toBe(42);
  });

  it.each([
    ['messages', MESSAGES_SSE.slice(0, 2)],
    ['chat', CHAT_SSE.slice(0, 1)],
  ] as const)('drops a %s stream without its final event', (format, events) => {
    const r = recorder(format);
    for (const e of events) r.push(Buffer.from(e));
    expect(r.finish()).toBeUndefined();
  });

  it('drops a stream with an error event, even if a final event follows', () => {
    const r = recorder('messages');
    r.push(Buffer.from(MESSAGES_SSE[0]!));
    r.push(
      Buffer.from(
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"x"}}\n\n',
      ),
    );
    r.push(Buffer.from(MESSAGES_SSE[2]!));
    expect(r.finish()).toBeUndefined();
    const c = recorder('chat');
    c.push(Buffer.from('data: {"error":{"message":"boom"}}\n\n'));
    c.push(Buffer.from('data: [DONE]\n\n'));
    expect(c.finish()).toBeUndefined();
  });

  it('drops a non-200 stream and one past the byte bound', () => {
    const bad = recorder('chat', 500);
    for (const e of CHAT_SSE) bad.push(Buffer.from(e));
    expect(bad.finish()).toBeUndefined();
    const big = recorder('chat', 200, 20);
    for (const e of CHAT_SSE) big.push(Buffer.from(e));
    expect(big.finish()).toBeUndefined();
  });
});

describe('json recorder', () => {
  it('keeps a 200 body that ended, drops other statuses and oversize bodies', () => {
    const make = (status: number, maxBytes = 1000) =>
      createResponseRecorder({
        format: 'chat',
        mode: 'json',
        status,
        headers: {},
        model: 'm',
        maxBytes,
        now: () => 1,
      });
    const ok = make(200);
    ok.push(Buffer.from('{"id":'));
    ok.push(Buffer.from('"x"}'));
    expect(ok.finish()).toMatchObject({ mode: 'json', status: 200, body: Buffer.from('{"id":"x"}') });
    const bad = make(400);
    bad.push(Buffer.from('{}'));
    expect(bad.finish()).toBeUndefined();
    const big = make(200, 3);
    big.push(Buffer.from('{"a":1}'));
    expect(big.finish()).toBeUndefined();
  });
});
