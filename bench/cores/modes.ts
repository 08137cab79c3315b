/** How the workers of the accept-rate measurement get their connections (accept-server.ts says how each works). */
export type AcceptMode = 'round-robin' | 'reuseport' | 'hand-off';
export const ACCEPT_MODES: readonly AcceptMode[] = ['round-robin', 'reuseport', 'hand-off'];
