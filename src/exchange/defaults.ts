/**
 * The fixed limits of token exchange, in one place.
 */

/**
 * What a token endpoint body may hold beyond its two tokens (each at most maxTokenLength):
 * the grant type, the token types (URNs of about 45 characters), an audience, a resource,
 * a scope and a client_id. Their names and values, form-encoded, fit well within 4 KiB;
 * RFC 8693 section 2.1 names no other parameter.
 */
export const TOKEN_REQUEST_OVERHEAD_BYTES = 4096;
