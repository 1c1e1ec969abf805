//! An SMTP server that keeps the exact bytes of each message's DATA, and reads them as a
//! lenient relay does: a `.` alone between any two line breaks (bare CR or LF too) ends the
//! data, and what follows is read as commands. A client that lets a bare CR or LF through can
//! smuggle a second message past it; one that sends only CRLF and doubles leading dots cannot.
//! Minimal SMTP: 220, EHLO/HELO 250 (no extensions), MAIL, RCPT, RSET, NOOP 250, DATA 354,
//! QUIT 221.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a connection may stay silent before the sink drops it: longer than any send.
const IDLE: Duration = Duration::from_secs(60);

/// One message as the sink read it.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    pub mail_from: String,
    pub rcpt_to: Vec<String>,
    /// The bytes between DATA's 354 and the end of data (its terminating line break and dot
    /// excluded), exactly as they came.
    pub data: Vec<u8>,
}

pub struct RawSmtpSink {
    pub port: u16,
    received: Arc<Mutex<Vec<Transaction>>>,
}

impl RawSmtpSink {
    /// Starts a sink on a port of its own, serving each connection on a thread.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the sink");
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let record = Arc::clone(&record);
                std::thread::spawn(move || serve(stream, &record));
            }
        });
        Self { port, received }
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message read so far, in order.
    pub fn received(&self) -> Vec<Transaction> {
        self.received.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, record: &Mutex<Vec<Transaction>>) {
    let _ = stream.set_read_timeout(Some(IDLE));
    let reply = |stream: &mut TcpStream, line: &str| {
        let _ = stream.write_all(format!("{line}\r\n").as_bytes());
    };
    reply(&mut stream, "220 raw sink ready");
    let mut buffer: Vec<u8> = Vec::new();
    let mut current = Transaction::default();
    let mut in_data = false;
    loop {
        if in_data {
            if let Some((data_end, resume)) = end_of_data(&buffer) {
                current.data = buffer[..data_end].to_vec();
                buffer.drain(..resume);
                record.lock().unwrap().push(std::mem::take(&mut current));
                in_data = false;
                reply(&mut stream, "250 accepted");
                continue;
            }
        } else if let Some((line, rest)) = command(&buffer) {
            let line = String::from_utf8_lossy(&buffer[..line]).into_owned();
            buffer.drain(..rest);
            let verb = line.get(..4).unwrap_or_default().to_ascii_uppercase();
            match verb.as_str() {
                "EHLO" | "HELO" => reply(&mut stream, "250 raw sink"),
                "MAIL" => {
                    current = Transaction {
                        mail_from: address(&line),
                        ..Transaction::default()
                    };
                    reply(&mut stream, "250 ok");
                }
                "RCPT" => {
                    current.rcpt_to.push(address(&line));
                    reply(&mut stream, "250 ok");
                }
                "DATA" => {
                    in_data = true;
                    reply(&mut stream, "354 end data with <CR><LF>.<CR><LF>");
                }
                "RSET" => {
                    current = Transaction::default();
                    reply(&mut stream, "250 ok");
                }
                "NOOP" => reply(&mut stream, "250 ok"),
                "QUIT" => {
                    reply(&mut stream, "221 bye");
                    return;
                }
                _ => reply(&mut stream, "500 unknown command"),
            }
            continue;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A command line in `buffer`, ended (leniently) by CRLF, a bare CR or a bare LF: its length
/// and where the next begins.
fn command(buffer: &[u8]) -> Option<(usize, usize)> {
    let end = buffer.iter().position(|b| matches!(b, b'\r' | b'\n'))?;
    match (buffer[end], buffer.get(end + 1)) {
        (b'\r', Some(b'\n')) => Some((end, end + 2)),
        (b'\r', None) => None,
        _ => Some((end, end + 1)),
    }
}

/// Where the data in `buffer` ends, read leniently: a `.` alone between two line breaks of any
/// kind (CRLF, CR or LF). Returns the data's length and where the commands after it begin.
fn end_of_data(buffer: &[u8]) -> Option<(usize, usize)> {
    let is_break = |b: u8| matches!(b, b'\r' | b'\n');
    for dot in 0..buffer.len() {
        if buffer[dot] != b'.' || (dot > 0 && !is_break(buffer[dot - 1])) {
            continue;
        }
        let after = *buffer.get(dot + 1)?;
        if !is_break(after) {
            continue;
        }
        let resume = match (after, buffer.get(dot + 2)) {
            (b'\r', Some(b'\n')) => dot + 3,
            (b'\r', None) => return None,
            _ => dot + 2,
        };
        let mut data_end = dot;
        if data_end > 0 && buffer[data_end - 1] == b'\n' {
            data_end -= 1;
        }
        if data_end > 0 && buffer[data_end - 1] == b'\r' {
            data_end -= 1;
        }
        return Some((data_end, resume));
    }
    None
}

/// The address in `MAIL FROM:<a>` or `RCPT TO:<a>`.
fn address(line: &str) -> String {
    let start = line.find('<').map_or(0, |i| i + 1);
    let end = line[start..].find('>').map_or(line.len(), |i| start + i);
    line[start..end].to_string()
}
