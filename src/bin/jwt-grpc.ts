#!/usr/bin/env node
// Only the V8 flag check loads before the command: when `serve` restarts itself with its
// V8 flags (src/cli/v8-flags.ts), nothing else has been loaded in vain.
import { execWithServeV8Flags } from '../cli/v8-flags.js';

execWithServeV8Flags();
await import('../cli/main.js');
