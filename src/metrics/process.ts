import type { Registry } from 'prom-client';
import { promClient } from '../base/optional-deps.js';

let registry: Registry | undefined;

/**
 * prom-client's process and Node.js metrics (CPU, memory, heap, event loop lag, GC,
 * handles), collected once per process: each collection starts an event loop monitor
 * and a GC observer that nothing stops, so servers made one after another share one.
 * @internal
 */
export function processMetrics(): Registry {
  if (registry === undefined) {
    const { Registry, collectDefaultMetrics } = promClient();
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
