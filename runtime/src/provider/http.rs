//! What both clients share below their wire formats: the HTTP client, the
//! settings every request is sent with, the retry loop, reading a body within
//! its limit, and turning every failure into a [`ModelError`].

use std::fmt;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE, RETRY_AFTER};

use crate::model::ModelError;
use crate::recover::{Backoff, Retry};

/// How much of a provider's error body, or of a body it should not have
/// sent, an error keeps: enough to read the provider's message.
pub(crate) const KEEP: usize = 4 * 1024;

/// An API key. It prints as `[redacted]`, and every text this crate makes
/// from what a server sent has it blanked out, so that no log or error
/// message shows it.
#[derive(Clone)]
pub(crate) struct ApiKey(Arc<str>);

impl ApiKey {
    pub(crate) fn new(key: &str) -> Option<ApiKey> {
        let key = key.trim();
        (!key.is_empty()).then(|| ApiKey(key.into()))
    }

    /// The key as a header value, marked sensitive so that the HTTP stack
    /// never prints it.
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, ModelError> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.0)).map_err(|_| {
            ModelError::Config {
                message: "the API key holds characters an HTTP header cannot carry".into(),
            }
        })?;
        value.set_sensitive(true);
        Ok(value)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The names of a client's environment variables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Env {
    pub(crate) key: &'static str,
    pub(crate) url: &'static str,
    pub(crate) model: &'static str,
    /// A model's name, for the message that asks for one.
    pub(crate) example: &'static str,
}

/// The connection to one provider and the settings of its requests.
#[derive(Clone, Debug)]
pub(crate) struct Transport {
    client: Result<reqwest::Client, String>,
    pub(crate) base_url: String,
    pub(crate) api_key: Option<ApiKey>,
    pub(crate) timeout: Duration,
    pub(crate) retry: Retry,
    pub(crate) max_retry_wait: Duration,
    pub(crate) max_response_bytes: usize,
    pub(crate) max_calls: usize,
    pub(crate) streaming: bool,
}

/// An answer being read: the response, and when its request's time is up
/// (its `timeout` from when it was sent), checked between chunks, so that a
/// body whose chunks are always ready cannot read past it.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) response: reqwest::Response,
    deadline: Option<Instant>,
    /// Bytes read since the reading last gave way to other tasks.
    since_yield: usize,
    /// What is left of the last chunk the body gave, handed out a piece at
    /// a time.
    held: bytes::Bytes,
}

impl Answer {
    pub(crate) fn new(response: reqwest::Response, deadline: Option<Instant>) -> Answer {
        Answer {
            response,
            deadline,
            since_yield: 0,
            held: bytes::Bytes::new(),
        }
    }
}

/// How much is read before the reading gives way to the executor once: a
/// body that is always ready would otherwise hold its thread, and every
/// deadline around it, until its end.
const YIELD_EVERY: usize = 64 * 1024;

impl Transport {
    pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
    pub(crate) const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
    pub(crate) const DEFAULT_MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
    pub(crate) const DEFAULT_MAX_CALLS: usize = 1024;

    /// Three attempts, waits from half a second doubling to at most eight,
    /// with full jitter: what the providers' own SDKs do.
    pub(crate) fn default_retry() -> Retry {
        Retry::exponential(3).with_backoff(Backoff {
            initial: Duration::from_millis(500),
            factor: 2.0,
            max: Duration::from_secs(8),
            jitter: true,
        })
    }

    pub(crate) fn new(base_url: &str) -> Transport {
        Transport {
            client: http_client(),
            base_url: base_url.to_owned(),
            api_key: None,
            timeout: Transport::DEFAULT_TIMEOUT,
            retry: Transport::default_retry(),
            max_retry_wait: Transport::DEFAULT_MAX_RETRY_WAIT,
            max_response_bytes: Transport::DEFAULT_MAX_RESPONSE_BYTES,
            max_calls: Transport::DEFAULT_MAX_CALLS,
            streaming: false,
        }
    }

    /// The URL of `path` under the base URL, checked; and the key, required
    /// unless the server is on this machine (Ollama, vLLM and llama.cpp need
    /// none). `env` names what to set when something is missing.
    pub(crate) fn endpoint(
        &self,
        path: &str,
        env: &Env,
    ) -> Result<(reqwest::Url, Option<&ApiKey>), ModelError> {
        let (key_var, url_var) = (env.key, env.url);
        let joined = format!("{}{path}", self.base_url.trim_end_matches('/'));
        let url = reqwest::Url::parse(&joined).map_err(|error| ModelError::Config {
            message: format!(
                "the base URL `{}` is not a URL ({error}): set {url_var} or call `base_url` with one such as `http://localhost:11434/v1`",
                self.base_url
            ),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ModelError::Config {
                message: format!(
                    "the base URL `{}` is not `http://` or `https://`",
                    self.base_url
                ),
            });
        }
        if self.api_key.is_none() && !is_local(&url) {
            return Err(ModelError::Config {
                message: format!(
                    "no API key for {}: set {key_var}, or call `api_key`",
                    url.host_str().unwrap_or("the server")
                ),
            });
        }
        Ok((url, self.api_key.as_ref()))
    }

    /// Posts `body` as JSON, retrying a rate limit, a server error, a timeout
    /// or a broken connection as [`Retry`] says; the response when its status
    /// is a success, to be read within the request's time.
    pub(crate) async fn post(
        &self,
        url: reqwest::Url,
        headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<Answer, ModelError> {
        let client = self.client.as_ref().map_err(|message| ModelError::Config {
            message: format!("the HTTP client could not be set up: {message}"),
        })?;
        let mut attempt = 1;
        loop {
            let deadline = Instant::now().checked_add(self.timeout);
            let sent = client
                .post(url.clone())
                .headers(headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .timeout(self.timeout)
                .body(body.clone())
                .send()
                .await;
            let (error, asked) = match sent {
                Ok(response) if response.status().is_success() => {
                    return Ok(Answer::new(response, deadline))
                }
                Ok(response) => self.status_error(Answer::new(response, deadline)).await,
                Err(error) => (self.transport_error(&error), None),
            };
            if !error.is_retryable() || attempt >= self.retry.max_attempts {
                return Err(error);
            }
            let wait = asked.unwrap_or_else(|| self.retry.backoff.delay(attempt, jitter()));
            if wait > self.max_retry_wait {
                return Err(error);
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// An error status as an error, with the body (its start) and the wait
    /// the server asked for.
    async fn status_error(&self, mut answer: Answer) -> (ModelError, Option<Duration>) {
        let status = answer.response.status().as_u16();
        let asked = retry_after(answer.response.headers(), SystemTime::now());
        let body = match self.read(&mut answer, 16 * KEEP).await {
            Ok(bytes) => self.scrub(&cut(&String::from_utf8_lossy(&bytes))),
            Err(_) => String::new(),
        };
        let error = match status {
            429 => ModelError::RateLimited {
                retry_after: asked,
                body,
            },
            _ => ModelError::Status { status, body },
        };
        (error, asked)
    }

    /// A failure of the HTTP exchange itself.
    pub(crate) fn transport_error(&self, error: &reqwest::Error) -> ModelError {
        if error.is_timeout() {
            return ModelError::Timeout {
                after: self.timeout,
            };
        }
        let mut message = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        ModelError::Connection {
            message: self.scrub(&message),
        }
    }

    /// The whole body, refused past `limit` bytes.
    pub(crate) async fn read(
        &self,
        answer: &mut Answer,
        limit: usize,
    ) -> Result<Vec<u8>, ModelError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.chunk(answer).await? {
            if body.len() + chunk.len() > limit {
                return Err(too_long(limit, &body));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The next piece of a body as it arrives, at most [`YIELD_EVERY`]
    /// bytes (a longer chunk is handed out in pieces), within the request's
    /// time. Every [`YIELD_EVERY`] bytes the reading gives way to other
    /// tasks once, so that the work done per poll is bounded and a deadline
    /// around it (an agent's wall time) is checked even when every chunk is
    /// ready at once.
    pub(crate) async fn chunk(
        &self,
        answer: &mut Answer,
    ) -> Result<Option<bytes::Bytes>, ModelError> {
        if answer.since_yield >= YIELD_EVERY {
            answer.since_yield = 0;
            YieldNow(false).await;
        }
        if answer
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            return Err(ModelError::Timeout {
                after: self.timeout,
            });
        }
        if answer.held.is_empty() {
            match answer.response.chunk().await {
                Ok(Some(chunk)) => answer.held = chunk,
                Ok(None) => return Ok(None),
                Err(error) => return Err(self.transport_error(&error)),
            }
        }
        let take = answer.held.len().min(YIELD_EVERY - answer.since_yield);
        let piece = answer.held.split_to(take);
        answer.since_yield += piece.len();
        Ok(Some(piece))
    }

    /// `text` with the API key blanked out, should a server have echoed it.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match &self.api_key {
            Some(ApiKey(key)) if text.contains(&**key) => text.replace(&**key, "[redacted]"),
            _ => text.to_owned(),
        }
    }
}

/// Gives way to the executor once: ready on its second poll, having woken
/// its task on the first.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The error for a body that is not what the provider documents: what was
/// wrong, and the body's start.
pub(crate) fn malformed(message: impl Into<String>, body: &[u8]) -> ModelError {
    ModelError::Malformed {
        message: message.into(),
        body: cut(&String::from_utf8_lossy(body)),
    }
}

/// The error for an answer longer than `limit` bytes.
pub(crate) fn too_long(limit: usize, start: &[u8]) -> ModelError {
    malformed(
        format!("the answer is longer than {limit} bytes, the most this client reads"),
        start,
    )
}

/// reqwest over rustls with the `ring` provider, given explicitly so that no
/// process-wide default is needed or installed, and the platform's roots.
/// Redirects are not followed: an API does not redirect a request, and
/// reqwest would carry a key in a header of our own (`x-api-key`) to
/// whatever host the redirect names; a 3xx is an error status instead.
fn http_client() -> Result<reqwest::Client, String> {
    let tls = crate::tls::client_config()?;
    reqwest::Client::builder()
        .http1_only()
        .redirect(reqwest::redirect::Policy::none())
        .tls_backend_preconfigured(tls)
        .user_agent(concat!("typed-tools/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| error.to_string())
}

/// Whether the server is on this machine.
fn is_local(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let ip = host.trim_start_matches('[').trim_end_matches(']');
    match ip.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// The wait a server asked for: `retry-after-ms` (OpenAI's and Anthropic's
/// SDKs read it first), then `retry-after` as seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(|ms| ms.parse::<f64>().ok()) {
        if let Ok(wait) = Duration::try_from_secs_f64(ms / 1000.0) {
            return Some(wait);
        }
    }
    let value = text(RETRY_AFTER.as_str())?;
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `text`, cut to [`KEEP`] bytes at a character boundary, saying how much
/// was left out.
pub(crate) fn cut(text: &str) -> String {
    if text.len() <= KEEP {
        return text.to_owned();
    }
    let mut end = KEEP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}

/// A sample in `[0, 1)` for the backoff's jitter: std's randomly keyed
/// hasher over a counter. It only has to spread retries apart.
fn jitter() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let bits = std::collections::hash_map::RandomState::new().hash_one(n);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderName;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (
                    HeaderName::from_static(name),
                    HeaderValue::from_str(value).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_or_as_a_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let read = |pairs| retry_after(&headers(pairs), now);
        assert_eq!(read(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(
            read(&[("retry-after", "0.5")]),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            read(&[("retry-after", "1"), ("retry-after-ms", "250")]),
            Some(Duration::from_millis(250))
        );
        // RFC 9110's example date, 20 s after `now`.
        assert_eq!(
            read(&[("retry-after", "Wed, 21 Oct 2015 07:28:20 GMT")]),
            Some(Duration::from_secs(20))
        );
        // A date already past: no wait.
        assert_eq!(
            read(&[("retry-after", "Wed, 21 Oct 2015 07:27:00 GMT")]),
            Some(Duration::ZERO)
        );
        assert_eq!(read(&[("retry-after", "soon")]), None);
        assert_eq!(read(&[("retry-after", "-3")]), None);
        assert_eq!(read(&[]), None);
    }

    #[test]
    fn bodies_are_cut_at_a_character_boundary() {
        let long = "é".repeat(KEEP);
        let kept = cut(&long);
        assert!(kept.starts_with(&"é".repeat(KEEP / 2)));
        assert!(
            kept.ends_with(&format!("… ({} more bytes)", KEEP)),
            "{}",
            &kept[KEEP - 10..]
        );
        assert_eq!(cut("short"), "short");
    }

    #[test]
    fn the_key_never_prints() {
        let mut transport = Transport::new("https://api.example.com");
        transport.api_key = ApiKey::new(" sk-secret-123\n");
        assert!(!format!("{transport:?}").contains("sk-secret-123"));
        assert_eq!(
            transport.scrub(r#"{"error": "Incorrect API key provided: sk-secret-123"}"#),
            r#"{"error": "Incorrect API key provided: [redacted]"}"#
        );
        let header = transport
            .api_key
            .as_ref()
            .unwrap()
            .header("Bearer ")
            .unwrap();
        assert!(header.is_sensitive());
        assert_eq!(header, "Bearer sk-secret-123");
    }

    #[test]
    fn a_key_is_needed_except_on_this_machine() {
        let set = &Env {
            key: "OPENAI_API_KEY",
            url: "OPENAI_BASE_URL",
            model: "OPENAI_MODEL",
            example: "`gpt-4o-mini`",
        };
        for local in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8000/v1",
            "http://[::1]:8080",
            "http://0.0.0.0:1234/v1/",
        ] {
            let transport = Transport::new(local);
            let (url, key) = transport.endpoint("/chat/completions", set).unwrap();
            assert!(url.path().ends_with("/chat/completions"), "{url}");
            assert!(!url.path().contains("//"), "{url}");
            assert!(key.is_none());
        }
        let remote = Transport::new("https://api.openai.com/v1");
        match remote.endpoint("/chat/completions", set) {
            Err(ModelError::Config { message }) => {
                assert!(message.contains("set OPENAI_API_KEY"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        match Transport::new("api.openai.com").endpoint("/x", set) {
            Err(ModelError::Config { message }) => {
                assert!(message.contains("OPENAI_BASE_URL"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn jitter_samples_lie_in_the_unit_interval_and_vary() {
        let samples: Vec<f64> = (0..100).map(|_| jitter()).collect();
        assert!(samples.iter().all(|s| (0.0..1.0).contains(s)));
        assert!(samples.windows(2).any(|w| w[0] != w[1]));
    }
}
