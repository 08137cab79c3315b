//! jwt-peer-rust: the Rust peer of the benchmark (bench/peers/README.md), written the way an
//! ordinary Rust user would: tonic (default server settings) serving JwtService of
//! proto/jwt.proto, or with `--rest` axum serving the same work as `POST /token` over
//! HTTP/1.1, and jsonwebtoken for the JWTs. Per call it does what the Go peer does
//! (work.rs). Worker threads: Tokio's multi-thread runtime reads TOKIO_WORKER_THREADS, as
//! the Go peer's runtime reads GOMAXPROCS; the harness sets it to the scenario's workers.

mod keys;
mod work;

// Generated from proto/jwt.proto by tonic-prost-build 0.14 and committed, so building needs
// only cargo (no protoc); see bench/peers/README.md for how to regenerate it.
#[allow(clippy::all)]
pub mod pb {
    include!("jwt.services.rs");
}

use pb::jwt_service_server::{JwtService, JwtServiceServer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tonic::{Request, Response, Status};
use work::{IssueError, Invalid, Issuer};

struct Cli {
    host: String,
    port: u16,
    keys: String,
    subjects: String,
    rest: bool,
    count_calls: bool,
}

const USAGE: &str = "usage: jwt-peer-rust [--host H] [--port N] --keys FILE --subjects FILE [--rest] [--count-calls]";

fn fail(message: &str) -> ! {
    eprintln!("jwt-peer-rust: {message}");
    std::process::exit(1);
}

/// `--flag value` or `--flag=value`; an unknown flag, a missing value or a bad port is a start error.
fn parse_cli() -> Result<Cli, String> {
    let mut cli = Cli { host: "127.0.0.1".into(), port: 50051, keys: String::new(), subjects: String::new(), rest: false, count_calls: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{name} needs a value; {USAGE}"));
        match name.as_str() {
            "--host" => cli.host = value()?,
            "--port" => {
                let v = value()?;
                cli.port = v.parse().map_err(|_| format!("bad --port {v}"))?;
            }
            "--keys" => cli.keys = value()?,
            "--subjects" => cli.subjects = value()?,
            "--rest" if inline.is_none() => cli.rest = true,
            "--count-calls" if inline.is_none() => cli.count_calls = true,
            _ => return Err(format!("unknown flag {arg}; {USAGE}")),
        }
    }
    if cli.keys.is_empty() || cli.subjects.is_empty() {
        return Err("--keys and --subjects are required".into());
    }
    Ok(cli)
}

/// Finished calls by outcome, counted only with --count-calls (two relaxed atomic adds per
/// call at most); SIGUSR1 prints `calls ok=N failed=M`, as the Go peer (bench/load/ok-count.ts).
struct Counter {
    on: bool,
    ok: AtomicU64,
    failed: AtomicU64,
}

impl Counter {
    fn record<T>(&self, result: &Result<T, Status>) {
        if self.on {
            let slot = if result.is_ok() { &self.ok } else { &self.failed };
            slot.fetch_add(1, Ordering::Relaxed);
        }
    }
}

struct Service {
    issuer: Arc<Issuer>,
    counter: Arc<Counter>,
}

#[tonic::async_trait]
impl JwtService for Service {
    async fn generate_jwt(&self, request: Request<pb::GenerateJwtRequest>) -> Result<Response<pb::GenerateJwtResponse>, Status> {
        let req = request.into_inner();
        let result = match self.issuer.generate(&req.algorithm, &req.subject) {
            Ok(t) => Ok(Response::new(pb::GenerateJwtResponse { jwt: t.jwt, sub: t.sub, kid: t.kid, expires_at: t.exp as i64 })),
            Err(IssueError::UnknownAlgorithm(m)) => Err(Status::invalid_argument(m)),
            Err(IssueError::Internal(m)) => Err(Status::internal(m)),
        };
        self.counter.record(&result);
        result
    }

    async fn verify_jwt(&self, request: Request<pb::VerifyJwtRequest>) -> Result<Response<pb::VerifyJwtResponse>, Status> {
        use pb::verify_jwt_response::Reason;
        let answer = match self.issuer.verify(&request.get_ref().jwt) {
            Ok(claims) => pb::VerifyJwtResponse { valid: true, sub: claims.sub, ..Default::default() },
            Err(why) => {
                let reason = match why {
                    Invalid::Malformed => Reason::Malformed,
                    Invalid::BadSignature => Reason::BadSignature,
                    Invalid::AlgorithmNotAllowed => Reason::AlgorithmNotAllowed,
                    Invalid::UnknownKey => Reason::UnknownKey,
                    Invalid::Expired => Reason::Expired,
                    Invalid::NotYetValid => Reason::NotYetValid,
                };
                pb::VerifyJwtResponse { reason: reason as i32, ..Default::default() }
            }
        };
        let result = Ok(Response::new(answer));
        self.counter.record(&result);
        result
    }

    async fn get_jwks(&self, _: Request<pb::GetJwksRequest>) -> Result<Response<pb::GetJwksResponse>, Status> {
        Ok(Response::new(pb::GetJwksResponse { jwks_json: r#"{"keys":[]}"#.into() }))
    }

    async fn get_status_list(&self, _: Request<pb::GetStatusListRequest>) -> Result<Response<pb::GetStatusListResponse>, Status> {
        Err(Status::unimplemented("GetStatusList is not part of the peer's work"))
    }

    async fn revoke_jwt(&self, _: Request<pb::RevokeJwtRequest>) -> Result<Response<pb::RevokeJwtResponse>, Status> {
        Err(Status::unimplemented("RevokeJwt is not part of the peer's work"))
    }
}

/// The REST front: `POST /token` with `{"algorithm": "..."}` answers `{"jwt", "sub"}`.
mod rest {
    use super::*;
    use axum::Json;
    use axum::extract::State;
    use axum::http::StatusCode;
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize)]
    pub struct TokenRequest {
        algorithm: String,
        #[serde(default)]
        subject: String,
    }

    #[derive(Serialize)]
    pub struct TokenResponse {
        jwt: String,
        sub: String,
    }

    #[derive(Serialize)]
    pub struct ErrorResponse {
        error: String,
    }

    pub async fn token(State(issuer): State<Arc<Issuer>>, Json(req): Json<TokenRequest>) -> Result<Json<TokenResponse>, (StatusCode, Json<ErrorResponse>)> {
        match issuer.generate(&req.algorithm, &req.subject) {
            Ok(t) => Ok(Json(TokenResponse { jwt: t.jwt, sub: t.sub })),
            Err(IssueError::UnknownAlgorithm(m)) => Err((StatusCode::BAD_REQUEST, Json(ErrorResponse { error: m }))),
            Err(IssueError::Internal(m)) => Err((StatusCode::INTERNAL_SERVER_ERROR, Json(ErrorResponse { error: m }))),
        }
    }
}

/// Resolves at the first SIGTERM or SIGINT.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).unwrap_or_else(|e| fail(&format!("SIGTERM handler: {e}")));
    let mut int = signal(SignalKind::interrupt()).unwrap_or_else(|e| fail(&format!("SIGINT handler: {e}")));
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// Graceful stop at SIGTERM/SIGINT; connections still open 2 s later are cut (the process exits 0).
async fn shutdown_then_force() {
    stop_signal().await;
    tokio::spawn(async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        std::process::exit(0);
    });
}

#[tokio::main]
async fn main() {
    let cli = parse_cli().unwrap_or_else(|e| fail(&e));
    let keys = keys::load_keys(&cli.keys).unwrap_or_else(|e| fail(&e));
    let subjects = work::load_subjects(&cli.subjects).unwrap_or_else(|e| fail(&e));
    let issuer = Arc::new(Issuer::new(keys, subjects));

    let host = cli.host.parse::<std::net::IpAddr>().unwrap_or_else(|_| fail(&format!("bad --host {}", cli.host)));
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(host, cli.port)).await.unwrap_or_else(|e| fail(&e.to_string()));
    let port = listener.local_addr().unwrap_or_else(|e| fail(&e.to_string())).port();
    let shown = if cli.host.contains(':') { format!("[{}]:{port}", cli.host) } else { format!("{}:{port}", cli.host) };

    if cli.rest {
        let app = axum::Router::new().route("/token", axum::routing::post(rest::token)).with_state(issuer);
        // TCP_NODELAY as node:http and tonic set it by default; axum::serve leaves it to the listener.
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        println!("listening on {shown}");
        if let Err(e) = axum::serve(listener, app).with_graceful_shutdown(shutdown_then_force()).await {
            fail(&e.to_string());
        }
        return;
    }

    let counter = Arc::new(Counter { on: cli.count_calls, ok: AtomicU64::new(0), failed: AtomicU64::new(0) });
    if cli.count_calls {
        let counter = counter.clone();
        let mut usr1 = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).unwrap_or_else(|e| fail(&format!("SIGUSR1 handler: {e}")));
        tokio::spawn(async move {
            while usr1.recv().await.is_some() {
                println!("calls ok={} failed={}", counter.ok.load(Ordering::Relaxed), counter.failed.load(Ordering::Relaxed));
            }
        });
    }
    let service = JwtServiceServer::new(Service { issuer, counter });
    // tonic's Server::builder() sets TCP_NODELAY on what it binds; an incoming stream gets it here.
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    println!("listening on {shown}");
    let served = tonic::transport::Server::builder() // default settings on purpose
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, shutdown_then_force())
        .await;
    if let Err(e) = served {
        fail(&e.to_string());
    }
}
