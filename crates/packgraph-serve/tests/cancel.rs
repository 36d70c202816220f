//! Queries that no one waits for any more are cancelled and give their place back: one past
//! the time limit (504), and one whose client closed its connection. The server allows a
//! single query at a time, so a query left running would answer the next one with 503.
//! The slow query is PageRank with a billion iterations: it would run for hours.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use packgraph::graph::Graph;
use packgraph_serve::client::Client;
use packgraph_serve::{Backend, ServeConfig, Server};

const ENDLESS: &str = "/run/pagerank?iterations=1000000000";

fn server(query_timeout: Duration) -> Server {
    let edges: Vec<_> = (1..2_000).map(|v| (v - 1, v)).collect();
    let graph = Graph::from_edges(2_000, &edges, false).unwrap();
    let mut config = ServeConfig::new("127.0.0.1:0".parse().unwrap());
    config.max_queries = 1;
    config.query_timeout = query_timeout;
    Server::start(Arc::new(Backend::memory(graph)), config, 2).unwrap()
}

/// The value of the series `name` in the server's metrics.
fn metric(client: &mut Client, name: &str) -> f64 {
    let text = client.get("/metrics").unwrap().text();
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

/// Waits (at most 5 s) until `name` reads `value`.
fn wait_for(client: &mut Client, name: &str, value: f64) -> Duration {
    let started = Instant::now();
    while metric(client, name) != value {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name} is not {value}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    started.elapsed()
}

#[test]
fn a_query_past_its_time_limit_is_cancelled_and_frees_its_place() {
    let server = server(Duration::from_millis(200));
    let mut client = Client::new(server.addr()).with_timeout(Duration::from_secs(20));
    let started = Instant::now();
    let answer = client.get(ENDLESS).unwrap();
    assert_eq!(answer.status, 504, "{}", answer.text());
    assert!(answer.text().contains("cancelled"), "{}", answer.text());
    assert!(started.elapsed() < Duration::from_secs(5));
    // The algorithm stops at its next iteration: the place is free at once.
    let freed = wait_for(&mut client, "packgraph_queries_running", 0.0);
    assert!(freed < Duration::from_secs(1), "{freed:?}");
    assert_eq!(
        metric(&mut client, "packgraph_queries_cancelled_total"),
        1.0
    );
    assert_eq!(
        metric(&mut client, "packgraph_queries_timed_out_total"),
        1.0
    );
    let answer = client.get("/run/bfs?source=0").unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    server.stop().unwrap();
}

#[test]
fn a_client_that_goes_away_cancels_its_query() {
    let server = server(Duration::from_secs(600));
    let mut client = Client::new(server.addr()).with_timeout(Duration::from_secs(20));
    let mut gone = TcpStream::connect(server.addr()).unwrap();
    write!(gone, "GET {ENDLESS} HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    wait_for(&mut client, "packgraph_queries_running", 1.0);
    let answer = client.get("/run/bfs?source=0").unwrap();
    assert_eq!(answer.status, 503, "one query at a time: {}", answer.text());
    // A version never pinned is a 404 at once, not a wait for a place.
    let answer = client.get("/run/bfs?source=0&version=999").unwrap();
    assert_eq!(answer.status, 404, "{}", answer.text());
    drop(gone);
    wait_for(&mut client, "packgraph_queries_running", 0.0);
    assert_eq!(
        metric(&mut client, "packgraph_queries_cancelled_total"),
        1.0
    );
    assert_eq!(
        metric(&mut client, "packgraph_queries_timed_out_total"),
        0.0
    );
    let answer = client.get("/run/bfs?source=0").unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    server.stop().unwrap();
}
