//! The `/metrics` endpoint: a small HTTP server (`tiny_http`) on its own thread.
//!
//! The exposition is encoded into a string first and sent from a thread of its own, so a
//! scraper that reads slowly (or not at all) delays only its own response: neither the
//! readouts nor other scrapers wait on it.

use super::metrics::Metrics;
use anyhow::Context;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The OpenMetrics content type `prometheus-client`'s text encoder writes.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How often the server looks at the stop flag while no request comes.
const POLL: Duration = Duration::from_millis(100);

/// A running endpoint; [`Endpoint::stop`] ends its thread.
pub struct Endpoint {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Listens on `addr` (port 0: any free port, see [`Endpoint::addr`]) and serves `metrics`.
    pub fn start(addr: SocketAddr, metrics: Arc<Metrics>) -> anyhow::Result<Endpoint> {
        let server =
            tiny_http::Server::http(addr).map_err(|e| anyhow::anyhow!("{e}")).with_context(|| {
                format!("cannot listen on {addr} for /metrics (is another collector running?)")
            })?;
        let addr = server.server_addr().to_ip().context("the metrics server has no IP address")?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("metrics-http".into())
            .spawn(move || serve(&server, &metrics, &flag))
            .context("cannot start the metrics thread")?;
        Ok(Endpoint { addr, stop, thread: Some(thread) })
    }

    /// Stops serving and waits for the thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(server: &tiny_http::Server, metrics: &Metrics, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let Ok(Some(req)) = server.recv_timeout(POLL) else { continue };
        let response = match (req.method(), req.url()) {
            (tiny_http::Method::Get, "/metrics") => tiny_http::Response::from_string(metrics.encode())
                .with_header(header("Content-Type", CONTENT_TYPE)),
            (_, "/metrics") => tiny_http::Response::from_string("only GET /metrics\n").with_status_code(405),
            _ => tiny_http::Response::from_string("smartnic collect: the metrics are at /metrics\n")
                .with_status_code(404),
        };
        // A client that went away is its own problem.
        std::thread::spawn(move || req.respond(response));
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}
