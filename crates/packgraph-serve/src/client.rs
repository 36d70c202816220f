//! A small blocking HTTP/1.1 client over one kept-alive connection, for tests and
//! benchmarks against a server on loopback: no TLS, no redirects, no proxies. It reads
//! bodies framed by `Content-Length` or chunked transfer encoding, and reconnects once
//! when the server closed an idle connection.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

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

#[cfg(test)]
mod tests {
    use super::*;

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
