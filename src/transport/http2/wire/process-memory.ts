/**
 * The memory every gRPC connection of this process holds for its calls (open streams,
 * request bytes not yet whole, answers waiting for the client's flow-control window), as
 * one count both transports charge: the process-wide ceiling, `maxProcessStreamMemoryMb`,
 * refuses new streams against it. One per process (module state), so that every server
 * in it, on either transport, shares it. The same per client address (PEER_MEMORY): one
 * address may hold its share of the ceiling (`peerSharePercent`), over all its connections.
 */
import { MemoryLedger, PeerLedgers } from './budget.js';

/** @internal The process's one count. */
export const PROCESS_MEMORY = new MemoryLedger();

/** @internal The process's count per client address. */
export const PEER_MEMORY = new PeerLedgers();
