//! A small blocking HTTP/1.1 client over one kept-alive connection, for tests and
//! benchmarks against a server on loopback: no TLS, no redirects, no proxies. It reads
//! bodies framed by `Content-Length` or chunked transfer encoding, and reconnects once
//! when the server closed an idle connection. [`post_concurrently`] keeps many
//! connections posting from one thread, as a load generator.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An answer: status, headers (names in lower case) and body.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    ///
    /// # Errors
    /// If the body is not JSON.
    pub fn json(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_slice(&self.body)
    }
}

/// A connection to one server.
#[derive(Debug)]
pub struct Client {
    addr: SocketAddr,
    token: Option<String>,
    timeout: Duration,
    connection: Option<BufReader<TcpStream>>,
}

/// Bodies up to this many bytes are sent in one write with the request's head.
const SMALL_BODY: usize = 64 << 10;

fn bad(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

impl Client {
    /// A client of the server at `addr` (connects on the first request).
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            token: None,
            timeout: Duration::from_secs(60),
            connection: None,
        }
    }

    /// Sends `Authorization: Bearer TOKEN` with every request.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Gives up on a read or write after `timeout` (default 60 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// `GET path`.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub fn get(&mut self, path: &str) -> io::Result<Response> {
        self.request("GET", path, &[], b"")
    }

    /// `POST path` with `body` of `content_type`.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub fn post(&mut self, path: &str, content_type: &str, body: &[u8]) -> io::Result<Response> {
        self.request("POST", path, &[("Content-Type", content_type)], body)
    }

    /// Sends one request and reads its answer. A kept-alive connection the server closed
    /// is reopened once, before anything of the answer was read.
    ///
    /// # Errors
    /// Connecting, writing or reading failed, or the answer is not HTTP/1.1.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<Response> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let reused = self.connection.is_some();
        match self.exchange(head.as_bytes(), body) {
            Err(e) if reused && is_stale(&e) => {
                self.connection = None;
                self.exchange(head.as_bytes(), body)
            }
            result => result,
        }
    }

    fn exchange(&mut self, head: &[u8], body: &[u8]) -> io::Result<Response> {
        let result = self.try_exchange(head, body);
        if result.as_ref().map_or(true, closes) {
            self.connection = None;
        }
        result
    }

    fn try_exchange(&mut self, head: &[u8], body: &[u8]) -> io::Result<Response> {
        if self.connection.is_none() {
            let stream = TcpStream::connect_timeout(&self.addr, self.timeout)?;
            stream.set_read_timeout(Some(self.timeout))?;
            stream.set_write_timeout(Some(self.timeout))?;
            stream.set_nodelay(true)?;
            self.connection = Some(BufReader::new(stream));
        }
        let reader = self.connection.as_mut().expect("connected above");
        let stream = reader.get_mut();
        // One write for the head and a small body: one segment for the server to read,
        // rather than a second wakeup for the body.
        if body.len() <= SMALL_BODY {
            let mut request = Vec::with_capacity(head.len() + body.len());
            request.extend_from_slice(head);
            request.extend_from_slice(body);
            stream.write_all(&request)?;
        } else {
            stream.write_all(head)?;
            stream.write_all(body)?;
        }
        read_response(reader)
    }
}

/// Whether the server closes the connection after this answer.
fn closes(response: &Response) -> bool {
    response
        .header("connection")
        .is_some_and(|v| v.eq_ignore_ascii_case("close"))
}

/// Whether `e` says a kept-alive connection was closed under us.
fn is_stale(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// Reads one answer: status line, headers, body.
fn read_response(reader: &mut impl BufRead) -> io::Result<Response> {
    let status_line = read_line(reader)?;
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| bad(format!("not an HTTP/1.1 status line: {status_line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad(format!("not a header: {line:?}")))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    if chunked {
        response.body = read_chunked(reader)?;
    } else if let Some(len) = response.header("content-length") {
        let len: usize = len.parse().map_err(|_| bad("a bad Content-Length"))?;
        response.body.resize(len, 0);
        reader.read_exact(&mut response.body)?;
    } else if closes(&response) {
        reader.read_to_end(&mut response.body)?;
    }
    Ok(response)
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let size_line = read_line(reader)?;
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| bad(format!("a bad chunk size: {size_line:?}")))?;
        if size == 0 {
            // Trailers, up to the blank line.
            while !read_line(reader)?.is_empty() {}
            return Ok(body);
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        read_line(reader)?;
    }
}

/// Keeps one `POST path` request of `content_type` in flight on each of `bodies.len()`
/// kept-alive connections to `addr` until `stop` is set: each connection sends its next
/// request (its body from its own `bodies` function) once the last is answered. Every
/// connection is served by one thread (the caller's, driving a single-threaded event
/// loop), so a load of many connections costs its machine a socket read and write per
/// request rather than a thread woken per answer.
///
/// Returns, per connection, the latency of each request (from sending to the last byte of
/// its answer). The server's answers must be framed by `Content-Length`.
///
/// # Errors
/// Connecting, writing or reading failed, or an answer was not `200` (its status and body
/// in the message).
pub fn post_concurrently<B>(
    addr: SocketAddr,
    path: &str,
    content_type: &str,
    bodies: Vec<B>,
    stop: &Arc<AtomicBool>,
) -> io::Result<Vec<Vec<Duration>>>
where
    B: FnMut() -> Vec<u8> + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let head: Arc<str> =
        format!("POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\n").into();
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for (i, body) in bodies.into_iter().enumerate() {
            let (head, stop) = (Arc::clone(&head), Arc::clone(stop));
            tasks.spawn(async move { (i, post_loop(addr, &head, body, &stop).await) });
        }
        let mut latencies = Vec::new();
        latencies.resize_with(tasks.len(), Vec::new);
        while let Some(done) = tasks.join_next().await {
            let (i, result) = done.map_err(io::Error::other)?;
            latencies[i] = result?;
        }
        Ok(latencies)
    })
}

/// One connection of [`post_concurrently`].
async fn post_loop(
    addr: SocketAddr,
    head: &str,
    mut body: impl FnMut() -> Vec<u8>,
    stop: &AtomicBool,
) -> io::Result<Vec<Duration>> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (mut request, mut answer) = (Vec::new(), Vec::with_capacity(1024));
    let mut latencies = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let body = body();
        request.clear();
        request.extend_from_slice(head.as_bytes());
        request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        request.extend_from_slice(&body);
        let started = Instant::now();
        send_all(&stream, &request).await?;
        let (status, body_at) = receive_answer(&stream, &mut answer).await?;
        latencies.push(started.elapsed());
        if status != 200 {
            let text = String::from_utf8_lossy(&answer[body_at..]);
            return Err(bad(format!("{status} {}", text.trim_end())));
        }
    }
    Ok(latencies)
}

async fn send_all(stream: &tokio::net::TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        stream.writable().await?;
        match stream.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads one answer framed by `Content-Length` into `buf`; its status and where its body
/// starts.
async fn receive_answer(
    stream: &tokio::net::TcpStream,
    buf: &mut Vec<u8>,
) -> io::Result<(u16, usize)> {
    buf.clear();
    let mut framed = None;
    loop {
        if let Some((status, body_at, len)) = framed {
            if buf.len() >= body_at + len {
                if buf.len() > body_at + len {
                    return Err(bad("bytes after the answer, which no request asked for"));
                }
                return Ok((status, body_at));
            }
        }
        let start = buf.len();
        buf.resize(start + 4096, 0);
        stream.readable().await?;
        let read = stream.try_read(&mut buf[start..]);
        buf.truncate(start + *read.as_ref().unwrap_or(&0));
        match read {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ))
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
        if framed.is_none() {
            framed = parse_head(buf)?;
        }
    }
}

/// The status, body offset and `Content-Length` of the answer whose head `buf` starts
/// with; `None` while the head is incomplete.
fn parse_head(buf: &[u8]) -> io::Result<Option<(u16, usize, usize)>> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| bad("an answer head not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| bad(format!("not an HTTP/1.1 status line: {status_line:?}")))?;
    let len = lines
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .ok_or_else(|| bad(format!("an answer without Content-Length: {head:?}")))?;
    Ok(Some((status, end + 4, len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every connection posts until stopped, each request answered before the next; a
    /// refused request is an error naming its status.
    #[test]
    fn concurrent_posts_reach_the_server_and_refusals_are_errors() {
        let graph = packgraph::graph::Graph::new(false);
        let backend = Arc::new(crate::Backend::memory(graph));
        let config = crate::ServeConfig::new("127.0.0.1:0".parse().unwrap());
        let server = crate::Server::start(Arc::clone(&backend), config, 1).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let bodies: Vec<_> = (0..3u64)
            .map(|c| move || format!("+ {c} {}\n", c + 1).into_bytes())
            .collect();
        let stopper = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                stop.store(true, Ordering::Relaxed);
            })
        };
        let latencies =
            post_concurrently(server.addr(), "/updates", "text/plain", bodies, &stop).unwrap();
        stopper.join().unwrap();
        assert_eq!(latencies.len(), 3);
        assert!(latencies.iter().all(|l| !l.is_empty()));
        assert_eq!(backend.latest().num_edges(), 3);
        let stop = Arc::new(AtomicBool::new(false));
        let bad = vec![|| b"+ 1\n".to_vec()];
        let err = post_concurrently(server.addr(), "/updates", "text/plain", bad, &stop)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("400 "), "{err}");
        server.stop().unwrap();
    }

    #[test]
    fn answer_heads_give_status_body_and_length() {
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\nx: y\r\n\r\n{\"acked\":[]}";
        assert_eq!(parse_head(head).unwrap(), Some((200, head.len() - 12, 12)));
        assert_eq!(parse_head(&head[..20]).unwrap(), None);
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(parse_head(chunked).is_err());
        assert!(parse_head(b"SSH-2.0\r\n\r\n").is_err());
    }

    #[test]
    fn answers_are_read_by_length_and_by_chunks() {
        let text = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello";
        let r = read_response(&mut &text[..]).unwrap();
        assert_eq!(
            (r.status, r.text(), r.header("x-a")),
            (200, "hello".into(), Some("b"))
        );
        let text = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let r = read_response(&mut &text[..]).unwrap();
        assert_eq!((r.status, r.text()), (404, "abcde".into()));
        assert!(read_response(&mut &b"SSH-2.0\r\n"[..]).is_err());
        assert!(
            read_response(&mut &b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab"[..]).is_err()
        );
    }
}
