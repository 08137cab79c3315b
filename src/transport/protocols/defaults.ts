/** The fixed values of the protocols served beside gRPC (Connect, gRPC-Web, CORS), in one place. */

/**
 * How long a browser may keep a preflight's answer, seconds: Chromium caps it at 7200
 * (two hours; https://source.chromium.org/chromium/chromium/src/+/main:services/network/public/cpp/cors/preflight_result.cc)
 * and Firefox at 86400, so a longer one buys nothing.
 */
export const CORS_MAX_AGE_SECONDS = 7200;
