//! The reference work, shared by the gRPC and the REST front: pick a subject (the request's,
//! else the next of the pool, round robin on an atomic counter), sign {sub, iat, exp = iat +
//! 7200} with the first key of the algorithm (header {alg, typ: "JWT", kid}), verify the
//! token just made (key by the header's kid, as VerifyJwt) and check its sub. The same as
//! the Go peer's GenerateJwt (bench/peers/go/main.go).

use crate::keys::Key;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub const TTL_SECONDS: u64 = 7200;

#[derive(Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub iat: u64,
    pub exp: u64,
}

/// What GenerateJwt answers.
pub struct Issued {
    pub jwt: String,
    pub sub: String,
    pub kid: String,
    pub exp: u64,
}

pub enum IssueError {
    /// No key of the requested algorithm: gRPC INVALID_ARGUMENT, HTTP 400.
    UnknownAlgorithm(String),
    /// Signing or the self-verification failed: gRPC INTERNAL, HTTP 500.
    Internal(String),
}

/// Why a token is not valid, as VerifyJwtResponse.Reason names it.
pub enum Invalid {
    Malformed,
    BadSignature,
    AlgorithmNotAllowed,
    UnknownKey,
    Expired,
    NotYetValid,
}

pub struct Issuer {
    keys: Vec<Key>,
    signers: HashMap<String, usize>, // alg name -> the key that signs (first listed)
    by_kid: HashMap<String, usize>,  // kid -> key, for verifying
    validations: HashMap<Algorithm, Validation>, // made once: read-only, shared by every call
    subjects: Vec<String>,
    next: AtomicU64,
}

impl Issuer {
    pub fn new(keys: Vec<Key>, subjects: Vec<String>) -> Self {
        let mut signers = HashMap::new();
        let mut by_kid = HashMap::new();
        let mut validations = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            signers.entry(format!("{:?}", k.alg)).or_insert(i);
            by_kid.insert(k.kid.clone(), i);
            validations.entry(k.alg).or_insert_with(|| {
                // As the Go peer's parser: exp required, no leeway, the key's algorithm only.
                let mut v = Validation::new(k.alg);
                v.leeway = 0;
                v
            });
        }
        Issuer { keys, signers, by_kid, validations, subjects, next: AtomicU64::new(0) }
    }

    pub fn generate(&self, algorithm: &str, subject: &str) -> Result<Issued, IssueError> {
        let Some(&i) = self.signers.get(algorithm) else {
            return Err(IssueError::UnknownAlgorithm(format!("algorithm {algorithm:?} is not configured")));
        };
        let key = &self.keys[i];
        let sub = if subject.is_empty() {
            let n = self.next.fetch_add(1, Ordering::Relaxed) % self.subjects.len() as u64;
            self.subjects[n as usize].clone()
        } else {
            subject.to_owned()
        };
        let iat = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let exp = iat + TTL_SECONDS;
        let mut header = Header::new(key.alg);
        header.kid = Some(key.kid.clone());
        let claims = Claims { sub, iat, exp };
        let jwt = jsonwebtoken::encode(&header, &claims, &key.sign).map_err(|e| IssueError::Internal(format!("sign: {e}")))?;
        // As every server under test does: verify what was just signed before answering it.
        match self.verify(&jwt) {
            Ok(verified) if verified.sub == claims.sub => {}
            _ => return Err(IssueError::Internal("self-verification failed".into())),
        }
        Ok(Issued { jwt, sub: claims.sub, kid: key.kid.clone(), exp })
    }

    /// Verifies a token with the key its header's kid names.
    pub fn verify(&self, token: &str) -> Result<Claims, Invalid> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| Invalid::Malformed)?;
        let key = header.kid.as_ref().and_then(|kid| self.by_kid.get(kid)).map(|&i| &self.keys[i]).ok_or(Invalid::UnknownKey)?;
        if key.alg != header.alg {
            return Err(Invalid::AlgorithmNotAllowed);
        }
        let validation = &self.validations[&key.alg];
        match jsonwebtoken::decode::<Claims>(token, &key.verify, validation) {
            Ok(data) => Ok(data.claims),
            Err(e) => Err(match e.kind() {
                ErrorKind::ExpiredSignature => Invalid::Expired,
                ErrorKind::ImmatureSignature => Invalid::NotYetValid,
                ErrorKind::InvalidAlgorithm => Invalid::AlgorithmNotAllowed,
                ErrorKind::InvalidSignature => Invalid::BadSignature,
                _ => Invalid::Malformed,
            }),
        }
    }
}

/// The subject pool: a non-empty JSON array of strings.
pub fn load_subjects(path: &str) -> Result<Vec<String>, String> {
    let raw = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let subjects: Vec<String> = serde_json::from_str(&raw).map_err(|e| format!("{path}: {e}"))?;
    if subjects.is_empty() {
        return Err(format!("{path}: no subjects"));
    }
    Ok(subjects)
}
