//! A loopback OpenAI-compatible Chat Completions server for the
//! provider-concurrency benchmark: every request is answered after a fixed
//! delay with its last user message echoed back. A thread per connection
//! (HTTP/1.1 keep-alive), so the server adds next to nothing to the delay.
//!
//! Usage: slow-openai-server PORT_FILE [DELAY_MS]
//! Writes the port it bound on 127.0.0.1 to PORT_FILE, serves until its
//! stdin closes (or five minutes pass), then prints how many requests it
//! answered, the most it held at once, and how long the last run took from
//! its first request to its last answer.

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cautilus_tests::model_server::{ModelServer, openai_echo};

/// A request arriving this long after the last arrival or answer starts a
/// new run (within a run, requests follow answers at once).
const QUIET: Duration = Duration::from_millis(20);

/// The last run: its first arrival, its last answer, its last event.
#[derive(Clone, Copy)]
struct Span {
    first: Instant,
    last_answer: Instant,
    last_event: Instant,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let port_file = args
        .next()
        .expect("usage: slow-openai-server PORT_FILE [DELAY_MS]");
    let delay = Duration::from_millis(args.next().map_or(50, |d| d.parse().expect("DELAY_MS")));
    let held = Arc::new((
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    ));
    let span: Arc<Mutex<Option<Span>>> = Arc::new(Mutex::new(None));
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::new(Mutex::new(Vec::new()));
    let (counts, spans, arrived_at) = (held.clone(), span.clone(), arrivals.clone());
    let server = ModelServer::start(move |request, _| {
        let arrived = Instant::now();
        arrived_at.lock().unwrap().push(arrived);
        {
            let mut span = spans.lock().unwrap();
            *span = Some(match *span {
                Some(s) if arrived - s.last_event < QUIET => Span {
                    last_event: arrived,
                    ..s
                },
                _ => Span {
                    first: arrived,
                    last_answer: arrived,
                    last_event: arrived,
                },
            });
        }
        let now = counts.0.fetch_add(1, Ordering::SeqCst) + 1;
        counts.1.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(delay);
        counts.0.fetch_sub(1, Ordering::SeqCst);
        counts.2.fetch_add(1, Ordering::SeqCst);
        let reply = openai_echo(request);
        if let Some(s) = spans.lock().unwrap().as_mut() {
            let answered = Instant::now();
            s.last_answer = answered;
            s.last_event = answered;
        }
        reply
    });
    let port = server.url.rsplit(':').next().unwrap_or_default();
    let temporary = format!("{port_file}.tmp");
    std::fs::write(&temporary, port).expect("writing the port file");
    std::fs::rename(&temporary, &port_file).expect("writing the port file");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let busy = span
        .lock()
        .unwrap()
        .map_or(0.0, |s| (s.last_answer - s.first).as_secs_f64());
    if std::env::var_os("BENCH_ARRIVALS").is_some()
        && let Some(s) = *span.lock().unwrap()
    {
        // The last run's arrivals, counted per 5 ms after its first.
        let mut buckets = std::collections::BTreeMap::<u128, usize>::new();
        for at in arrivals.lock().unwrap().iter().filter(|at| **at >= s.first) {
            *buckets
                .entry((*at - s.first).as_millis() / 5 * 5)
                .or_default() += 1;
        }
        eprintln!("server: arrivals per 5 ms of the last run (ms: count): {buckets:?}");
    }
    eprintln!(
        "server: answered {} requests, at most {} at once; the last run's first request to its last answer: {busy:.3} s",
        held.2.load(Ordering::SeqCst),
        held.1.load(Ordering::SeqCst)
    );
}
