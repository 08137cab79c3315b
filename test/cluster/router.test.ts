/**
 * The IPC router: a table keyed by the message union's `type`. A message it has no
 * handler for fails closed: refused, logged by type, never handled, never thrown.
 */
import { describe, expect, it } from 'vitest';
import type { WorkerMessage } from '../../src/cluster/messages.js';
import { type HandlerTable, MessageRouter } from '../../src/cluster/router.js';
import { recordingLogger } from '../../bench/kit/jwt-servers.js';

type Seen = { readonly type: string; readonly from: string };

function router() {
  const seen: Seen[] = [];
  const record = (message: WorkerMessage, from: string): void => {
    seen.push({ type: message.type, from });
  };
  const table: HandlerTable<WorkerMessage, string> = {
    'jwt-grpc:hello': record,
    'jwt-grpc:listening': record,
    'jwt-grpc:spare-ready': record,
    'jwt-grpc:adopted': record,
    'jwt-grpc:cannot-listen': record,
    'jwt-grpc:keys-applied': record,
    'jwt-grpc:policy-applied': record,
    'jwt-grpc:reserve-status-indexes': record,
    'jwt-grpc:revoke': record,
    'jwt-grpc:metrics': record,
  };
  const logger = recordingLogger();
  return { seen, logger, router: new MessageRouter(table, logger, (from: string) => ({ workerPid: from })) };
}

describe('MessageRouter', () => {
  it('hands each message to the handler of its type, with where it came from', () => {
    const { seen, logger, router: r } = router();
    expect(r.route({ type: 'jwt-grpc:hello' }, 'w1')).toBe(true);
    expect(r.route({ type: 'jwt-grpc:listening' }, 'w2')).toBe(true);
    expect(r.route({ type: 'jwt-grpc:metrics', id: 1, metrics: [] }, 'w1')).toBe(true);
    expect(seen).toEqual([
      { type: 'jwt-grpc:hello', from: 'w1' },
      { type: 'jwt-grpc:listening', from: 'w2' },
      { type: 'jwt-grpc:metrics', from: 'w1' },
    ]);
    expect(logger.lines).toEqual([]);
  });

  it.each([
    ['a type of no version of the protocol', { type: 'jwt-grpc:surprise' }, '"jwt-grpc:surprise"'],
    ["the other direction's type", { type: 'jwt-grpc:shutdown', graceMs: 0 }, '"jwt-grpc:shutdown"'],
    ["an Object.prototype member's name", { type: 'toString' }, '"toString"'],
    ['__proto__', JSON.parse('{"type":"__proto__"}'), '"__proto__"'],
    ['constructor', { type: 'constructor' }, '"constructor"'],
    ['no type', { port: 1 }, '(none: undefined)'],
    ['a type that is not a string', { type: 7 }, '(none: number)'],
    ['null', null, '(none: undefined)'],
    ['a string', 'jwt-grpc:hello', '(none: undefined)'],
  ])('refuses %s: logged with its type and sender, no handler runs, nothing thrown', (_, message, shown) => {
    const { seen, logger, router: r } = router();
    expect(r.route(message, 'w9')).toBe(false);
    expect(seen).toEqual([]);
    expect(logger.lines).toEqual([
      { level: 'warn', message: `refused an IPC message of unknown type ${shown}`, fields: { workerPid: 'w9' } },
    ]);
  });

  it('cuts a long refused type short and never logs the message body', () => {
    const { logger, router: r } = router();
    r.route({ type: 'x'.repeat(10_000), jwks: { keys: [{ d: 'private-key-material' }] } }, 'w1');
    const line = JSON.stringify(logger.lines);
    expect(line).not.toContain('private-key-material');
    expect(logger.lines[0]!.message).toBe(`refused an IPC message of unknown type "${'x'.repeat(64)}"`);
  });

  it('keeps routing after a refusal', () => {
    const { seen, router: r } = router();
    r.route({ type: 'nope' }, 'w1');
    r.route({ type: 'jwt-grpc:hello' }, 'w1');
    expect(seen).toEqual([{ type: 'jwt-grpc:hello', from: 'w1' }]);
  });
});
