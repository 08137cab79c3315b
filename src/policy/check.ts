/**
 * The policy document's shape and its checker live in ../options/policy.ts, beside the
 * option table whose `policy` row they type: a module that resolves options (the verifier,
 * the client) loads them there without loading the policy engine of this folder. This
 * re-export keeps the imports of the server and cluster modules as they are.
 */
export { type CallerPolicy, type JwtPolicy, checkPolicy, policyKind } from '../options/policy.js';
