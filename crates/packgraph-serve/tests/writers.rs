//! Many writers at once against a server with a two-thread pool, on a graph large enough
//! for its batches to use the pool: every acknowledged edge is applied exactly once, and no
//! request hangs (the client gives up after 20 s). A batch waiting for the graph's writer
//! lock on the pool thread that holds it hung `packgraph-bench serve` once; this test runs
//! the same shape of load but did not reproduce that hang reliably.

use std::sync::Arc;
use std::time::Duration;

use packgraph::graph::{Graph, GraphRead};
use packgraph_serve::client::Client;
use packgraph_serve::{Backend, ServeConfig, Server};

#[test]
fn concurrent_writers_all_commit() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut config = ServeConfig::new("127.0.0.1:0".parse().unwrap());
    config.pool = Some(Arc::new(pool));
    let edges = packgraph::io::generate::kronecker(12, 16, 42);
    let graph = Graph::from_edges(1 << 12, &edges, false).unwrap();
    let before = graph.num_edges() as u64;
    let backend = Arc::new(Backend::memory(graph));
    let server = Server::start(Arc::clone(&backend), config, 2).unwrap();
    let (writers, batches, edges) = (8u64, 200u64, 1u64);
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let mut client = Client::new(server.addr()).with_timeout(Duration::from_secs(20));
            std::thread::spawn(move || {
                for b in 0..batches {
                    let first = (w * batches + b) * edges;
                    let body: String = (first..first + edges)
                        .map(|i| format!("+ {i} {}\n", i + 100_000))
                        .collect();
                    let answer = client
                        .post("/updates", "text/plain", body.as_bytes())
                        .unwrap();
                    assert_eq!(answer.status, 200, "{}", answer.text());
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let added = writers * batches * edges;
    assert_eq!(backend.latest().num_edges() as u64, before + added);
    server.stop().unwrap();
}
