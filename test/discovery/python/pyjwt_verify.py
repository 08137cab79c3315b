"""Verifies tokens as a Python service does with PyJWT: discovery, then PyJWKClient on jwks_uri.

Usage: python pyjwt_verify.py ISSUER < tokens (one per line). Prints one line per token:
"ok SUBJECT KID" or "fail REASON". Exits 1 when discovery itself fails.
"""
import json
import sys
import urllib.request

import jwt

issuer = sys.argv[1]
try:
    with urllib.request.urlopen(issuer.rstrip("/") + "/.well-known/openid-configuration", timeout=10) as answer:
        configuration = json.load(answer)
    if configuration["issuer"] != issuer:
        raise ValueError(f"issuer mismatch: {configuration['issuer']!r}")
except Exception as err:  # noqa: BLE001 - one line for the test to show
    print(f"discovery: {err}", file=sys.stderr)
    sys.exit(1)

client = jwt.PyJWKClient(configuration["jwks_uri"], cache_keys=True)
algorithms = configuration["id_token_signing_alg_values_supported"]
for line in sys.stdin:
    token = line.strip()
    if not token:
        continue
    try:
        key = client.get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key, algorithms=algorithms, issuer=issuer, options={"verify_aud": False})
        print("ok", claims["sub"], key.key_id, flush=True)
    except Exception as err:  # noqa: BLE001 - reported per token
        print("fail", type(err).__name__, str(err).replace("\n", " "), flush=True)
