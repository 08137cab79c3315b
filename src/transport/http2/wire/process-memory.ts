/**
 * The memory every gRPC connection of this process holds for its calls (open streams,
 * request bytes not yet whole, answers waiting for the client's flow-control window), as
 * one count both transports charge: the process-wide ceiling, `maxProcessStreamMemoryMb`,
 * refuses new streams against it. One per process (module state), so that every server
 * in it, on either transport, shares it.
 */
import { MemoryLedger } from './budget.js';

/** @internal The process's one count. */
export const PROCESS_MEMORY = new MemoryLedger();
