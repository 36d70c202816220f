//! `packgraph serve` end to end: the real binary on a free loopback port, spoken to over
//! HTTP with `packgraph_serve::client`. Every endpoint and error status, concurrent writers
//! and readers against an oracle, SIGKILL while clients write, SIGTERM with a request in
//! flight, and the token off loopback.

mod common;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use common::bad;
use packgraph_serve::client::{Client, Response};
use serde_json::{json, Value};

/// A running server, killed when dropped.
struct Served {
    child: Child,
    addr: SocketAddr,
}

/// Starts `packgraph serve ARGS --listen 127.0.0.1:0` and waits for its `listening on`.
fn serve(args: &[&str]) -> Served {
    serve_on("127.0.0.1:0", args)
}

fn serve_on(listen: &str, args: &[&str]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_packgraph"))
        .args(["--threads", "2", "serve", "--listen", listen])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = send.send(line);
    });
    let line = receive
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_default();
    let Some(url) = line.trim().strip_prefix("listening on http://") else {
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        panic!(
            "serve {args:?} did not start: {line:?} {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let addr = url.parse().unwrap();
    Served { child, addr }
}

impl Served {
    fn client(&self) -> Client {
        Client::new(self.addr).with_timeout(Duration::from_secs(30))
    }

    /// Sends `signal` (by name, `TERM` or `KILL`) to the server.
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the server to exit (at most 30 s); its exit code.
    fn wait(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the server did not exit");
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(client: &mut Client, body: &str) -> Response {
    client
        .post("/updates", "text/plain", body.as_bytes())
        .unwrap()
}

fn json_post(client: &mut Client, path: &str, body: &Value) -> Response {
    client
        .post(path, "application/json", body.to_string().as_bytes())
        .unwrap()
}

fn get_json(client: &mut Client, path: &str) -> Value {
    let response = client
        .request("GET", path, &[("Accept", "application/json")], b"")
        .unwrap();
    assert_eq!(response.status, 200, "{path}: {}", response.text());
    response.json().unwrap()
}

/// Asserts `response` is an error with `status` and a JSON `error` message; returns the
/// JSON.
fn error(response: &Response, status: u16) -> Value {
    assert_eq!(response.status, status, "{}", response.text());
    assert_eq!(response.header("content-type"), Some("application/json"));
    let body = response.json().unwrap();
    assert!(body["error"].is_string(), "{body}");
    body
}

#[test]
fn every_endpoint_answers_and_every_mistake_is_a_json_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g").display().to_string();
    let server = serve(&[&data, "--create", "--directed", "--max-body-bytes", "4096"]);
    let mut c = server.client();
    assert_eq!(
        get_json(&mut c, "/health"),
        json!({"status":"ok","version":0,"durable_seq":0})
    );
    // The first batch fixes the directory's kind of id (integers): a name after it is
    // refused, naming its line, and the batch before it stays acknowledged.
    let refused = text(&mut c, "+ 1 2\n+ 2 3\ncommit\n# named\n+ 3 alice\n");
    let body = error(&refused, 400);
    assert_eq!(body["line"], 5, "{body}");
    assert_eq!(body["acked"], json!([{"seq":1,"version":1}]), "{body}");
    let acked = text(&mut c, "+ 3 5\n");
    assert_eq!(acked.status, 200, "{}", acked.text());
    assert_eq!(
        acked.json().unwrap(),
        json!({"acked":[{"seq":2,"version":2}]})
    );
    let acked = json_post(
        &mut c,
        "/updates",
        &json!({"insert":[[4,1]],"delete":[[2,3]]}),
    );
    assert_eq!(
        acked.json().unwrap()["acked"],
        json!([{"seq":3,"version":3}])
    );
    assert_eq!(
        get_json(&mut c, "/graph"),
        json!({"vertices":5,"edges":3,"directed":true,"weighted":false,"version":3})
    );
    assert_eq!(
        get_json(&mut c, "/vertices/2"),
        json!({"id":2,"out_degree":0,"in_degree":1,"out":[],"in":[1]})
    );
    assert_eq!(get_json(&mut c, "/vertices/5")["in"], json!([3]));
    // Text output is `packgraph run`'s.
    let bfs = get_json(&mut c, "/run/bfs?source=4");
    assert_eq!(
        bfs,
        json!({"version":3,"algorithm":"bfs","values":{"1":1,"2":2,"3":null,"5":null,"4":0}})
    );
    let text_bfs = c.get("/run/bfs?source=4").unwrap();
    assert_eq!(text_bfs.status, 200);
    assert_eq!(
        text_bfs.text(),
        "1 1\n2 2\n3 9223372036854775807\n4 0\n5 9223372036854775807\n"
    );

    // Pinned versions stay readable while the graph goes on.
    let pinned = json_post(&mut c, "/snapshots", &json!({})).json().unwrap()["version"].clone();
    assert_eq!(pinned, 3);
    text(&mut c, "- 1 2\n");
    assert_eq!(get_json(&mut c, "/vertices/1?version=3")["out"], json!([2]));
    assert_eq!(get_json(&mut c, "/vertices/1")["out"], json!([]));
    let old = get_json(&mut c, "/run/wcc?version=3");
    assert_eq!(old["values"]["2"], old["values"]["1"]);
    assert_eq!(
        c.request("DELETE", "/snapshots/3", &[], b"")
            .unwrap()
            .status,
        200
    );
    error(&c.request("DELETE", "/snapshots/3", &[], b"").unwrap(), 404);
    error(&c.get("/vertices/1?version=3").unwrap(), 404);
    error(&c.get("/run/bfs?version=99&source=1").unwrap(), 404);

    // Bad updates: nothing of the bad batch or later ones, earlier ones acknowledged.
    let before = get_json(&mut c, "/graph");
    let refused = error(
        &text(&mut c, "+ 7 8\ncommit\n+ 8 9\n+ 9\ncommit\n+ 10 11\n"),
        400,
    );
    assert_eq!(refused["line"], 4);
    assert_eq!(refused["acked"], json!([{"seq":5,"version":5}]));
    let refused = error(
        &json_post(&mut c, "/updates", &json!({"insert":[[1,2],[1,2,3]]})),
        400,
    );
    assert_eq!(
        (refused["item"].clone(), refused["list"].clone()),
        (json!(1), json!("insert"))
    );
    error(
        &json_post(&mut c, "/updates", &json!({"insert":[[1,-2]]})),
        400,
    );
    error(&json_post(&mut c, "/updates", &json!([[1, 2]])), 400);
    error(&c.post("/updates", "application/json", b"{").unwrap(), 400);
    error(
        &c.post("/updates", "application/xml", b"<a/>").unwrap(),
        415,
    );
    error(
        &c.post("/updates", "text/plain", &[b'#'; 5000]).unwrap(),
        413,
    );
    let after = get_json(&mut c, "/graph");
    assert_eq!(after["edges"], before["edges"].as_u64().unwrap() + 1);

    // Bad queries.
    let unknown = error(&c.get("/run/dijkstra").unwrap(), 400);
    assert!(unknown["valid"].as_array().unwrap().contains(&json!("bfs")));
    let param = error(&c.get("/run/bfs?damping=0.5").unwrap(), 400);
    assert_eq!(param["valid"], json!(["source", "version"]));
    error(&c.get("/run/pagerank?damping=2").unwrap(), 400);
    error(&c.get("/run/bfs?source=nobody").unwrap(), 404);
    error(&c.get("/vertices/nobody").unwrap(), 404);
    error(&c.get("/vertices/1?depth=2").unwrap(), 400);
    error(&c.get("/nowhere").unwrap(), 404);
    error(&c.request("PUT", "/graph", &[], b"").unwrap(), 405);

    let checkpoint = json_post(&mut c, "/checkpoint", &json!({}));
    let stats = checkpoint.json().unwrap();
    assert!(stats["bytes_written"].as_u64().unwrap() > 0, "{stats}");
    let metrics = c.get("/metrics").unwrap();
    assert!(metrics
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let metrics = metrics.text();
    for series in [
        "packgraph_batches_acked_total 5\n",
        "packgraph_queries_total{algorithm=\"bfs\"} 2\n",
        "packgraph_queries_total{algorithm=\"wcc\"} 1\n",
        "packgraph_version 5\n",
        "packgraph_pinned_versions 0\n",
        "packgraph_ack_latency_seconds_count",
        "packgraph_query_latency_seconds_bucket{le=\"+Inf\"} 3\n",
        "packgraph_graph_bytes",
    ] {
        assert!(metrics.contains(series), "{series} in\n{metrics}");
    }
}

#[test]
fn text_answers_match_packgraph_run_and_the_demo_serves_from_memory() {
    let server = serve(&["--demo", "--scale", "6"]);
    let mut c = server.client();
    let graph = get_json(&mut c, "/graph");
    assert_eq!(graph["vertices"], 64);
    let answer = c.get("/run/bfs?source=0").unwrap();
    assert_eq!(answer.status, 200);
    let version = graph["version"].to_string();
    assert_eq!(answer.header("x-packgraph-version"), Some(version.as_str()));
    let lines: Vec<String> = answer.text().lines().map(String::from).collect();
    assert_eq!(lines.len(), 64);
    assert_eq!(lines[0], "0 0");
    let json = get_json(&mut c, "/run/bfs?source=0");
    for line in &lines {
        let (id, value) = line.split_once(' ').unwrap();
        let expected = match value {
            "9223372036854775807" => Value::Null,
            v => json!(v.parse::<u64>().unwrap()),
        };
        assert_eq!(json["values"][id], expected);
    }
    assert_eq!(text(&mut c, "+ 0 1000\n").status, 200);
    error(&json_post(&mut c, "/checkpoint", &json!({})), 409);
}

#[test]
fn a_missing_directory_or_bad_flags_refuse_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing").display().to_string();
    let message = bad(&["serve", &missing, "--listen", "127.0.0.1:0"]);
    assert!(message.contains("not a data directory"), "{message}");
    assert!(!dir.path().join("nothing").exists());
    let message = bad(&["serve", &missing, "--listen", "0.0.0.0:0", "--create"]);
    assert!(message.contains("needs a token"), "{message}");
    let token = dir.path().join("token");
    std::fs::write(&token, "   \n").unwrap();
    let message = bad(&[
        "serve",
        "--demo",
        "--token-file",
        &token.display().to_string(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert!(message.contains("token must be non-empty"), "{message}");
    let message = bad(&["serve", "--demo", "--write-nice", "20"]);
    assert!(message.contains("--write-nice"), "{message}");
}

/// Each thread of process `pid`: its name and nice value (`/proc/PID/task/TID/stat`).
#[cfg(target_os = "linux")]
fn thread_priorities(pid: u32) -> Vec<(String, i64)> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let Ok(stat) = std::fs::read_to_string(task.unwrap().path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        // Fields after the name start at the third (state); the nice value is the 19th.
        let nice = stat[close + 1..].split_whitespace().nth(16).unwrap();
        threads.push((name, nice.parse().unwrap()));
    }
    threads
}

#[cfg(target_os = "linux")]
#[test]
fn queries_first_lowers_the_write_path_and_the_syncer_only() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g").display().to_string();
    let base = thread_priorities(std::process::id())[0].1;
    let lowered = (base + 7).min(19);
    let server = serve(&[&data, "--create", "--sync", "group:2", "--write-nice", "7"]);
    let mut c = server.client();
    assert_eq!(text(&mut c, "+ 0 1\n").status, 200);
    assert_eq!(c.get("/run/bfs?source=0").unwrap().status, 200);
    let threads = thread_priorities(server.child.id());
    let nice_of = |name: &str| -> Vec<i64> {
        threads
            .iter()
            .filter(|(n, _)| n == name)
            .map(|&(_, p)| p)
            .collect()
    };
    // Every thread is at one of the two priorities (a thread started by a lowered one is
    // not lowered twice).
    assert!(
        threads.iter().all(|&(_, p)| p == base || p == lowered),
        "{threads:?}"
    );
    // Names are cut to 15 bytes: the writer and its pool are `packgraph-write`; the
    // runtime's threads serve connections.
    for name in ["packgraph-write", "packgraph-ack", "tokio-rt-worker"] {
        let values = nice_of(name);
        assert!(
            !values.is_empty() && values.iter().all(|&p| p == lowered),
            "{name}: {threads:?}"
        );
    }
    // Unnamed threads: the main thread and the query pool keep the priority; the store's
    // group-commit syncer and its mark writer are lowered.
    let unnamed = nice_of("packgraph");
    assert!(unnamed.contains(&base), "{threads:?}");
    assert!(
        unnamed.iter().filter(|&&p| p == lowered).count() >= 2,
        "{threads:?}"
    );
}

#[test]
fn off_loopback_every_request_needs_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret-token\n").unwrap();
    let token_file = token.display().to_string();
    let mut server = serve_on(
        "0.0.0.0:0",
        &["--demo", "--scale", "4", "--token-file", &token_file],
    );
    let addr = SocketAddr::from(([127, 0, 0, 1], server.addr.port()));
    let refused = Client::new(addr).get("/health").unwrap();
    let body = error(&refused, 401);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    assert!(!body.to_string().contains("s3cret"));
    error(
        &Client::new(addr)
            .with_token("s3cret-tokeN")
            .get("/graph")
            .unwrap(),
        401,
    );
    let mut c = Client::new(addr).with_token("s3cret-token");
    assert_eq!(c.get("/health").unwrap().status, 200);
    assert_eq!(text(&mut c, "+ 1 2\n").status, 200);
    server.signal("TERM");
    assert_eq!(server.wait(), Some(0));
    let mut stderr = String::new();
    server
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("s3cret"), "{stderr}");
}

/// Breadth-first hops from `source` in the undirected graph `edges`.
fn oracle_bfs(edges: &BTreeSet<(u64, u64)>, vertices: &BTreeSet<u64>, source: u64) -> Value {
    let mut adjacent: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for &(u, v) in edges {
        adjacent.entry(u).or_default().push(v);
        adjacent.entry(v).or_default().push(u);
    }
    let mut hops = BTreeMap::from([(source, 0u64)]);
    let mut queue = VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        for &v in adjacent.get(&u).into_iter().flatten() {
            if !hops.contains_key(&v) {
                hops.insert(v, hops[&u] + 1);
                queue.push_back(v);
            }
        }
    }
    let values: serde_json::Map<String, Value> = vertices
        .iter()
        .map(|v| {
            (
                v.to_string(),
                hops.get(v).map_or(Value::Null, |&h| json!(h)),
            )
        })
        .collect();
    Value::Object(values)
}

#[test]
fn concurrent_writers_and_readers_agree_with_an_oracle_at_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g").display().to_string();
    let server = serve(&[&data, "--create", "--sync", "group:2"]);
    let mut c = server.client();
    assert_eq!(text(&mut c, "+ 0 1\n").status, 200);
    type Batch = (Vec<(u64, u64)>, Vec<(u64, u64)>);
    let (writers, readers) = (3, 2);
    let done = Arc::new(AtomicBool::new(false));
    let writer_threads: Vec<_> = (0..writers)
        .map(|w: u64| {
            let mut c = server.client();
            std::thread::spawn(move || {
                let mut acked: Vec<(u64, u64, Batch)> = Vec::new();
                let mut state = w + 1;
                let mut next = move |bound: u64| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 33) % bound
                };
                for i in 0..25 {
                    let inserts: Vec<(u64, u64)> = (0..3).map(|_| (next(40), next(40))).collect();
                    let deletes: Vec<(u64, u64)> = match (i % 4, acked.last()) {
                        (3, Some((_, _, (ins, _)))) => ins[..1].to_vec(),
                        _ => Vec::new(),
                    };
                    let body = json!({"insert": inserts, "delete": deletes});
                    let answer = json_post(&mut c, "/updates", &body);
                    assert_eq!(answer.status, 200, "{}", answer.text());
                    let ack = answer.json().unwrap()["acked"][0].clone();
                    let (seq, version) = (
                        ack["seq"].as_u64().unwrap(),
                        ack["version"].as_u64().unwrap(),
                    );
                    acked.push((seq, version, (inserts, deletes)));
                }
                acked
            })
        })
        .collect();
    let reader_threads: Vec<_> = (0..readers)
        .map(|_| {
            let mut c = server.client();
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !done.load(Ordering::Relaxed) || seen.len() < 3 {
                    let pinned = json_post(&mut c, "/snapshots", &json!({}));
                    let version = pinned.json().unwrap()["version"].as_u64().unwrap();
                    let bfs = get_json(&mut c, &format!("/run/bfs?source=0&version={version}"));
                    assert_eq!(bfs["version"], version);
                    let path = format!("/snapshots/{version}");
                    assert_eq!(c.request("DELETE", &path, &[], b"").unwrap().status, 200);
                    seen.push((version, bfs["values"].clone()));
                }
                seen
            })
        })
        .collect();
    // Each batch by its sequence number, with the version it was acknowledged with: the
    // version its group was published as, which several batches may share.
    let mut batches: BTreeMap<u64, (u64, Batch)> =
        BTreeMap::from([(1, (1, (vec![(0, 1)], vec![])))]);
    for thread in writer_threads {
        for (seq, version, batch) in thread.join().unwrap() {
            assert!(
                batches.insert(seq, (version, batch)).is_none(),
                "sequence number {seq} twice"
            );
        }
    }
    // Versions grow with sequence numbers: a version holds a prefix of the batches.
    let versions: Vec<u64> = batches.values().map(|(version, _)| *version).collect();
    assert!(versions.windows(2).all(|w| w[0] <= w[1]), "{versions:?}");
    done.store(true, Ordering::Relaxed);
    assert_eq!(batches.len(), 1 + writers as usize * 25);
    let mut checked = 0;
    for thread in reader_threads {
        for (version, values) in thread.join().unwrap() {
            let (mut edges, mut vertices) = (BTreeSet::new(), BTreeSet::new());
            let seen = batches.values().take_while(|(v, _)| *v <= version);
            for (inserts, deletes) in seen.map(|(_, b)| b) {
                for &(u, v) in inserts {
                    vertices.extend([u, v]);
                    if u != v {
                        edges.insert((u.min(v), u.max(v)));
                    }
                }
                for &(u, v) in deletes {
                    edges.remove(&(u.min(v), u.max(v)));
                }
            }
            assert_eq!(
                values,
                oracle_bfs(&edges, &vertices, 0),
                "version {version}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 2 * readers);
}

#[test]
fn every_acknowledged_batch_survives_a_kill_while_clients_write() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g").display().to_string();
    let mut server = serve(&[&data, "--create", "--sync", "group:2"]);
    // Single-edge requests from several clients at once, applied in groups.
    let writers: Vec<_> = (0..6u64)
        .map(|w| {
            let mut c = server.client();
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for i in 0..100_000u64 {
                    let (u, v) = (w * 1_000_000 + i, w * 1_000_000 + i + 1);
                    match c.post("/updates", "text/plain", format!("+ {u} {v}\n").as_bytes()) {
                        Ok(r) if r.status == 200 => {
                            let ack = r.json().unwrap()["acked"][0].clone();
                            let seq = ack["seq"].as_u64().unwrap();
                            let version = ack["version"].as_u64().unwrap();
                            assert!(
                                version >= seq,
                                "seq {seq} acknowledged at version {version}"
                            );
                            acked.push((seq, u, v));
                        }
                        _ => break,
                    }
                }
                acked
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(400));
    server.signal("KILL");
    server.wait();
    let acked: Vec<(u64, u64, u64)> = writers
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(acked.len() > 10, "only {} acknowledged", acked.len());
    let seqs: BTreeSet<u64> = acked.iter().map(|&(seq, _, _)| seq).collect();
    assert_eq!(
        seqs.len(),
        acked.len(),
        "every batch its own sequence number"
    );
    let server = serve(&[&data]);
    let mut c = server.client();
    for (_, u, v) in acked {
        let vertex = get_json(&mut c, &format!("/vertices/{u}"));
        assert!(
            vertex["out"].as_array().unwrap().contains(&json!(v)),
            "{u} {v} lost"
        );
    }
}

#[test]
fn sigterm_finishes_the_request_in_flight_then_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("g").display().to_string();
    let mut server = serve(&[&data, "--create"]);
    // A request whose body is half sent when the signal arrives.
    let body = "+ 1 2\n+ 2 3\n";
    let mut stream = TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /updates HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body.as_bytes()[..6]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    server.signal("TERM");
    std::thread::sleep(Duration::from_millis(300));
    // No new connections once stopping.
    assert!(Client::new(server.addr).get("/health").is_err());
    stream.write_all(&body.as_bytes()[6..]).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.contains(r#"{"acked":[{"seq":1,"version":1}]}"#),
        "{answer}"
    );
    assert_eq!(server.wait(), Some(0));
    let server = serve(&[&data]);
    assert_eq!(get_json(&mut server.client(), "/graph")["edges"], 2);
}

#[test]
fn slow_queries_time_out_crowds_are_refused_and_idle_connections_close() {
    let server = serve(&[
        "--demo",
        "--scale",
        "8",
        "--max-queries",
        "1",
        "--query-timeout",
        "1",
        "--idle-timeout",
        "0.3",
    ]);
    let mut c = server.client();
    // A slow query holds the only place while it runs...
    let mut other = server.client();
    let slow = std::thread::spawn(move || other.get("/run/pagerank?iterations=100000000").unwrap());
    let running = |c: &mut Client, n: u32| {
        let text = c.get("/metrics").unwrap().text();
        text.contains(&format!("\npackgraph_queries_running {n}\n"))
    };
    let started = Instant::now();
    while !running(&mut c, 1) {
        assert!(started.elapsed() < Duration::from_secs(5), "no query ran");
        std::thread::sleep(Duration::from_millis(5));
    }
    let crowded = c.get("/run/bfs?source=0").unwrap();
    error(&crowded, 503);
    assert_eq!(crowded.header("retry-after"), Some("1"));
    // ...until the time limit cancels it, which gives the place back at once.
    let slow = error(&slow.join().unwrap(), 504);
    assert!(
        slow["error"].as_str().unwrap().contains("time limit"),
        "{slow}"
    );
    let started = Instant::now();
    while !running(&mut c, 0) {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the cancelled query kept its place"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(c.get("/run/bfs?source=0").unwrap().status, 200);
    assert_eq!(c.get("/health").unwrap().status, 200);
    let mut idle = TcpStream::connect(server.addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut buffer = Vec::new();
    let _ = idle.read_to_end(&mut buffer);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "an idle connection stayed open"
    );
}
