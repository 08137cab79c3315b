//! Loading the --keys file: a JWK Set of private keys (the harness writes it, one key per
//! algorithm, each with kid and alg), into jsonwebtoken's keys. As the Go peer's keys.go:
//! the order is kept (the first key of an algorithm signs, every key verifies), a duplicate
//! kid or an unsupported alg is a start error naming it, and each key signs and verifies
//! once at start so that a key whose public half does not match its private half fails then.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde::Deserialize;
use std::collections::HashSet;

/// One entry of the keys file, ready to sign and verify.
pub struct Key {
    pub kid: String,
    pub alg: Algorithm,
    pub sign: EncodingKey,
    pub verify: DecodingKey,
}

#[derive(Deserialize)]
struct Jwk {
    #[serde(default)]
    kty: String,
    #[serde(default)]
    kid: String,
    #[serde(default)]
    alg: String,
    #[serde(default)]
    crv: String,
    #[serde(default)]
    k: String,
    #[serde(default)]
    x: String,
    #[serde(default)]
    y: String,
    #[serde(default)]
    d: String,
    #[serde(default)]
    n: String,
    #[serde(default)]
    e: String,
    #[serde(default)]
    p: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    dp: String,
    #[serde(default)]
    dq: String,
    #[serde(default)]
    qi: String,
}

#[derive(Deserialize)]
struct JwkSet {
    #[serde(default)]
    keys: Vec<Jwk>,
}

/// Reads the JWK Set at `path`, in order.
pub fn load_keys(path: &str) -> Result<Vec<Key>, String> {
    let raw = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let set: JwkSet = serde_json::from_str(&raw).map_err(|e| format!("{path}: {e}"))?;
    if set.keys.is_empty() {
        return Err(format!("{path}: no keys"));
    }
    let mut seen = HashSet::new();
    let mut keys = Vec::with_capacity(set.keys.len());
    for (i, jwk) in set.keys.iter().enumerate() {
        let key = parse_jwk(jwk).map_err(|e| format!("{path}: key {i} (kid {:?}): {e}", jwk.kid))?;
        if !seen.insert(key.kid.clone()) {
            return Err(format!("{path}: duplicate kid {:?}", key.kid));
        }
        keys.push(key);
    }
    Ok(keys)
}

fn parse_jwk(j: &Jwk) -> Result<Key, String> {
    if j.kid.is_empty() || j.alg.is_empty() {
        return Err("kid and alg are required".into());
    }
    let (alg, sign, verify) = match j.alg.as_str() {
        "HS256" | "HS384" | "HS512" => {
            let secret = need("oct", j, &j.k)?;
            (j.alg.parse().unwrap(), EncodingKey::from_secret(&secret), DecodingKey::from_secret(&secret))
        }
        "ES256" => {
            crv(j, "P-256")?;
            let (d, x, y) = (need("EC", j, &j.d)?, b64(&j.x)?, b64(&j.y)?);
            if d.len() != 32 || x.len() != 32 || y.len() != 32 {
                return Err("bad P-256 field length".into());
            }
            let verify = DecodingKey::from_ec_components(&j.x, &j.y).map_err(|e| e.to_string())?;
            (Algorithm::ES256, EncodingKey::from_ec_der(&p256_pkcs8(&d, &x, &y)), verify)
        }
        "EdDSA" => {
            crv(j, "Ed25519")?;
            let seed = need("OKP", j, &j.d)?;
            if seed.len() != 32 {
                return Err("bad Ed25519 d length".into());
            }
            let verify = DecodingKey::from_ed_components(&j.x).map_err(|e| e.to_string())?;
            (Algorithm::EdDSA, EncodingKey::from_ed_der(&ed25519_pkcs8(&seed)), verify)
        }
        "RS256" | "RS384" | "RS512" | "PS256" | "PS384" | "PS512" => {
            let mut fields = Vec::new();
            for f in [&j.n, &j.e, &j.d, &j.p, &j.q, &j.dp, &j.dq, &j.qi] {
                fields.push(need("RSA", j, f)?);
            }
            let verify = DecodingKey::from_rsa_components(&j.n, &j.e).map_err(|e| e.to_string())?;
            (j.alg.parse().unwrap(), EncodingKey::from_rsa_der(&rsa_pkcs1(&fields)), verify)
        }
        // ES384/ES512 (and anything else) are refused by name: the harness never makes them.
        other => return Err(format!("unsupported alg {other:?}")),
    };
    let key = Key { kid: j.kid.clone(), alg, sign, verify };
    self_test(&key)?;
    Ok(key)
}

/// Signs and verifies once: a bad private key, or a public half that does not match it, fails at start.
fn self_test(key: &Key) -> Result<(), String> {
    let claims = crate::work::Claims { sub: "self-test".into(), iat: 0, exp: u64::MAX / 2 };
    let token = jsonwebtoken::encode(&jsonwebtoken::Header::new(key.alg), &claims, &key.sign).map_err(|e| format!("self-test sign: {e}"))?;
    let mut validation = jsonwebtoken::Validation::new(key.alg);
    validation.leeway = 0;
    jsonwebtoken::decode::<crate::work::Claims>(&token, &key.verify, &validation).map_err(|e| format!("self-test verify (public key does not match?): {e}"))?;
    Ok(())
}

fn crv(j: &Jwk, want: &str) -> Result<(), String> {
    if j.crv != want {
        return Err(format!("alg {} needs crv {want}, got {:?}", j.alg, j.crv));
    }
    Ok(())
}

/// Checks the kty and decodes one required base64url field.
fn need(kty: &str, j: &Jwk, field: &str) -> Result<Vec<u8>, String> {
    if j.kty != kty {
        return Err(format!("alg {} needs kty {kty}, got {:?}", j.alg, j.kty));
    }
    b64(field)
}

fn b64(s: &str) -> Result<Vec<u8>, String> {
    if s.is_empty() {
        return Err("missing key field".into());
    }
    URL_SAFE_NO_PAD.decode(s).map_err(|e| format!("bad base64url: {e}"))
}

/// PKCS#8 v1 of a P-256 key with its public point (RFC 5915 inside RFC 5208): what
/// `EncodingKey::from_ec_der` reads. A fixed template: every length is fixed for P-256.
fn p256_pkcs8(d: &[u8], x: &[u8], y: &[u8]) -> Vec<u8> {
    let mut der = vec![
        0x30, 0x81, 0x87, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
        0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x6d, 0x30, 0x6b, 0x02, 0x01, 0x01, 0x04, 0x20,
    ];
    der.extend_from_slice(d);
    der.extend_from_slice(&[0xa1, 0x44, 0x03, 0x42, 0x00, 0x04]);
    der.extend_from_slice(x);
    der.extend_from_slice(y);
    der
}

/// PKCS#8 v1 of an Ed25519 seed (RFC 8410): what `EncodingKey::from_ed_der` reads.
fn ed25519_pkcs8(seed: &[u8]) -> Vec<u8> {
    let mut der = vec![0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
    der.extend_from_slice(seed);
    der
}

/// PKCS#1 RSAPrivateKey (RFC 8017, A.1.2) from the JWK's n, e, d, p, q, dp, dq, qi: what
/// `EncodingKey::from_rsa_der` reads (aws-lc checks the parts agree when it loads it).
fn rsa_pkcs1(fields: &[Vec<u8>]) -> Vec<u8> {
    let mut body = der_integer(&[0]);
    for f in fields {
        body.extend(der_integer(f));
    }
    der_tlv(0x30, &body)
}

fn der_integer(unsigned: &[u8]) -> Vec<u8> {
    let trimmed: &[u8] = match unsigned.iter().position(|&b| b != 0) {
        Some(i) => &unsigned[i..],
        None => &[0],
    };
    let mut value = Vec::with_capacity(trimmed.len() + 1);
    if trimmed[0] & 0x80 != 0 {
        value.push(0); // positive: a leading zero where the high bit is set
    }
    value.extend_from_slice(trimmed);
    der_tlv(0x02, &value)
}

fn der_tlv(tag: u8, value: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = value.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len.to_be_bytes().iter().copied().skip_while(|&b| b == 0).collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(value);
    out
}
