//! The in-container agent's protocol: requests written on its stdin, length-framed answers
//! read from its stdout (see `dockerfiles/agent.py` and the `docker` module's documentation).

use futures_util::StreamExt;
use std::collections::HashMap;
use tokio::io::AsyncWriteExt;

/// The in-container agent (see the module documentation).
pub const AGENT: &str = include_str!("../../../dockerfiles/agent.py");

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ScratchFile {
    Read(Vec<u8>),
    /// Too big to come back with the command: read on demand.
    Big,
}

/// The open exec of the agent.
pub(super) struct Agent {
    pub(super) output: std::pin::Pin<
        Box<
            dyn futures_util::Stream<
                    Item = Result<bollard::container::LogOutput, bollard::errors::Error>,
                > + Send,
        >,
    >,
    pub(super) input: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
    /// Stdout bytes received and not yet consumed.
    pub(super) buf: Vec<u8>,
    /// What the agent wrote on its stderr (a traceback), for error messages.
    pub(super) diag: Vec<u8>,
}

/// A request to the agent (see `dockerfiles/agent.py`).
#[derive(serde::Serialize)]
pub(super) struct Request<'a> {
    pub(super) script: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(super) args: &'a [&'a str],
    pub(super) timeout: f64,
    pub(super) clear: bool,
    pub(super) reset: bool,
    pub(super) prefetch: bool,
    pub(super) output_cap: u64,
    pub(super) file_cap: u64,
    /// Bytes of stdin following the request line.
    pub(super) stdin: usize,
    /// After the command, the repository's size into this scratch file (`du -sk`'s line),
    /// measured by the agent itself (see `Worker::exec_and_measure`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) measure: Option<&'a str>,
    /// Run through the resident runner instead of `script` (see `resident_run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) resident: Option<serde_json::Value>,
}

impl<'a> Request<'a> {
    /// A git or file request (no scratch handling, no resident): `script` with `args`,
    /// `stdin` bytes following, the tree reset first when `reset`.
    pub(super) fn short(
        script: &'a str,
        args: &'a [&'a str],
        stdin: usize,
        output_cap: u64,
        timeout: std::time::Duration,
        reset: bool,
    ) -> Request<'a> {
        Request {
            resident: None,
            measure: None,
            script,
            args,
            timeout: timeout.as_secs_f64(),
            clear: false,
            reset,
            prefetch: false,
            output_cap,
            file_cap: 0,
            stdin,
        }
    }
}

/// The agent's answer line; the payload (stdout, stderr, then each file) follows it.
#[derive(serde::Deserialize, Debug, Default)]
pub(super) struct Reply {
    #[serde(default)]
    pub(super) ready: bool,
    #[serde(default)]
    pub(super) reset_failed: bool,
    #[serde(default)]
    pub(super) error: Option<String>,
    /// The exit status, when the command exited.
    #[serde(default)]
    pub(super) rc: Option<i32>,
    /// The signal that ended the command (SIGKILL when the timeout fired).
    #[serde(default)]
    pub(super) signal: Option<i32>,
    #[serde(default)]
    pub(super) elapsed: f64,
    /// The agent's deadline killed the command (a plain command's answer; a resident run's
    /// is read from its signal and elapsed time).
    #[serde(default)]
    pub(super) timed_out: bool,
    #[serde(default)]
    pub(super) oom_kills: u64,
    /// (bytes sent, size of the output)
    #[serde(default)]
    pub(super) stdout: (usize, u64),
    #[serde(default)]
    pub(super) stderr: (usize, u64),
    /// (name, bytes sent), -1 for a file too big to send.
    #[serde(default)]
    pub(super) files: Vec<(String, i64)>,
    /// The resident runner started but forking it is not safe: why (nothing ran).
    #[serde(default, rename = "unsafe")]
    pub(super) unsafe_reason: Option<String>,
    /// The resident runner died or hung without answering.
    #[serde(default)]
    pub(super) lost: bool,
}

/// A reply with its payload split up.
pub(super) struct Answer {
    pub(super) reply: Reply,
    pub(super) stdout: Vec<u8>,
    pub(super) stderr: Vec<u8>,
    pub(super) files: HashMap<String, ScratchFile>,
}

/// Why a request got no answer.
pub(super) enum NoAnswer {
    /// Nothing within the time allowed.
    Timeout,
    /// The agent's stream ended or broke (the command killed it, the container died).
    Gone(String),
}

impl Agent {
    /// Take one complete reply off the buffer, when there is one.
    fn take_reply(&mut self) -> Result<Option<Answer>, String> {
        let Some(nl) = self.buf.iter().position(|b| *b == b'\n') else {
            return Ok(None);
        };
        let reply: Reply = serde_json::from_slice(&self.buf[..nl])
            .map_err(|e| format!("unreadable agent reply: {e}"))?;
        let sizes: Vec<usize> = [reply.stdout.0, reply.stderr.0]
            .into_iter()
            .chain(reply.files.iter().map(|(_, n)| (*n).max(0) as usize))
            .collect();
        let need: usize = sizes.iter().sum();
        if self.buf.len() < nl + 1 + need {
            return Ok(None);
        }
        let mut rest: Vec<u8> = self.buf.drain(..nl + 1 + need).skip(nl + 1).collect();
        let mut take = |n: usize| -> Vec<u8> {
            let tail = rest.split_off(n);
            std::mem::replace(&mut rest, tail)
        };
        let stdout = take(reply.stdout.0);
        let stderr = take(reply.stderr.0);
        let mut files = HashMap::new();
        for (name, n) in &reply.files {
            if *n < 0 {
                files.insert(name.clone(), ScratchFile::Big);
            } else {
                files.insert(name.clone(), ScratchFile::Read(take(*n as usize)));
            }
        }
        Ok(Some(Answer {
            reply,
            stdout,
            stderr,
            files,
        }))
    }

    /// Send a request (and its stdin) and wait for the answer.
    pub(super) async fn ask(&mut self, line: &[u8], stdin: &[u8]) -> Result<Answer, String> {
        self.input
            .write_all(line)
            .await
            .map_err(|e| e.to_string())?;
        self.input
            .write_all(stdin)
            .await
            .map_err(|e| e.to_string())?;
        self.input.flush().await.map_err(|e| e.to_string())?;
        self.answer().await
    }

    pub(super) async fn answer(&mut self) -> Result<Answer, String> {
        loop {
            if let Some(a) = self.take_reply()? {
                return Ok(a);
            }
            match self.output.next().await {
                Some(Ok(bollard::container::LogOutput::StdOut { message })) => {
                    self.buf.extend_from_slice(&message)
                }
                Some(Ok(bollard::container::LogOutput::StdErr { message })) => {
                    if self.diag.len() < 1 << 16 {
                        self.diag.extend_from_slice(&message);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.to_string()),
                None => {
                    return Err(format!(
                        "the agent exited{}",
                        if self.diag.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", String::from_utf8_lossy(&self.diag).trim())
                        }
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent_with(bytes: &[u8]) -> Agent {
        Agent {
            output: Box::pin(futures_util::stream::empty()),
            input: Box::pin(tokio::io::sink()),
            buf: bytes.to_vec(),
            diag: Vec::new(),
        }
    }

    #[test]
    fn parses_agent_replies() {
        let mut bytes = br#"{"rc": null, "signal": 9, "elapsed": 2.5, "oom_kills": 1, "stdout": [3, 3], "stderr": [5, 9], "files": [["report.xml", 4], ["coverage.json", -1], ["a b", 3]]}"#.to_vec();
        bytes.extend_from_slice(b"\nabcx\ny\nz<a/>end");
        bytes.extend_from_slice(b"{\"ready\": true}\n");
        let mut agent = agent_with(&bytes);
        let a = agent.take_reply().unwrap().unwrap();
        assert_eq!(a.reply.rc, None);
        assert_eq!(a.reply.signal, Some(9));
        assert_eq!(a.reply.oom_kills, 1);
        assert_eq!(a.stdout, b"abc");
        assert_eq!(a.stderr, b"x\ny\nz");
        assert_eq!(a.reply.stderr, (5, 9));
        assert_eq!(a.files["report.xml"], ScratchFile::Read(b"<a/>".to_vec()));
        assert_eq!(a.files["coverage.json"], ScratchFile::Big);
        assert_eq!(a.files["a b"], ScratchFile::Read(b"end".to_vec()));
        assert!(agent.take_reply().unwrap().unwrap().reply.ready);
        assert!(agent.take_reply().unwrap().is_none());
        // A reply whose payload has not all arrived yet waits.
        let mut partial = agent_with(b"{\"rc\": 0, \"stdout\": [10, 10]}\nabc");
        assert!(partial.take_reply().unwrap().is_none());
        assert_eq!(partial.buf.len(), 33);
    }
}
