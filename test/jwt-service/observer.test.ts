/**
 * composeObservers (src/jwt-service/observer.ts): the observers around JwtService's core,
 * composed in order, with a hook only where one of them has it (the core skips the rest).
 */
import { describe, expect, it } from 'vitest';
import { type CoreObserver, type IssuedEvent, composeObservers } from '../../src/jwt-service/observer.js';

describe('composeObservers', () => {
  it('calls every observer that has a hook, in order, and leaves out a hook none has', () => {
    const heard: string[] = [];
    const first: CoreObserver<string> = {
      onIssued: (event, scope) => heard.push(`first ${event.kid} ${scope}`),
      onRevoke: () => heard.push('first revoke'),
    };
    const second: CoreObserver<string> = { onIssued: (event) => heard.push(`second ${event.kid}`) };
    const composed = composeObservers([first, undefined, second]);
    composed.onIssued?.({ kid: 'k' } as IssuedEvent, 'span');
    composed.onRevoke?.({ outcome: 'invalid', error: new Error('x') });
    expect(heard).toEqual(['first k span', 'second k', 'first revoke']);
    expect(composed.onVerified).toBeUndefined();
    expect(composed.onRefused).toBeUndefined();
    expect(composeObservers([])).toEqual({});
  });
});
