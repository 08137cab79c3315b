import { fastJwt } from './fast-jwt.js';
import { jose } from './jose.js';
import { jsonwebtoken } from './jsonwebtoken.js';
import { nodeCryptoP1363 } from './node-crypto-p1363.js';
import { ours } from './ours.js';
import { nodeCryptoExchangeFloor } from './exchange.js';
import type { MicroLibrary } from './types.js';

/** The libraries of the micro table, ours first. */
export const LIBRARIES: readonly MicroLibrary[] = [ours, jose, fastJwt, jsonwebtoken, nodeCryptoP1363, nodeCryptoExchangeFloor];
