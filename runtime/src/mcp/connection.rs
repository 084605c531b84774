//! The HTTP server's connections (feature `mcp-http`): accepted within a
//! cap, each served by hyper with a timer, and closed when a peer stalls.
//!
//! `axum::serve` gives hyper no timer, so none of hyper's timeouts apply: a
//! connection that sends half a header stays open for ever, and enough of
//! them use up the process's file descriptors. Here:
//!
//! - at most `max_connections` are served at once; past it the listener is
//!   not polled, so new connections wait in the kernel's listen backlog and
//!   are accepted, in order, as served ones close. An admitted connection is
//!   never closed to make room, but while every slot is taken each answer
//!   is sent with `Connection: close`, so that clients that keep their
//!   connections alive take turns with those waiting instead of holding
//!   the slots for as long as they keep calling.
//! - hyper has a timer and `header_timeout`: a request line and headers not
//!   whole within it, counted from when the server starts waiting for them
//!   (a new connection, or the end of the previous answer on a kept-alive
//!   one), close the connection.
//! - a request's body must arrive whole within `body_timeout` of its
//!   headers; past it the body read fails, what was read is dropped, and
//!   the request is answered `408` and the connection closed.
//! - a connection on which no byte moves either way for `idle_timeout`
//!   while no request is being answered is closed: a client that does not
//!   read its answer, or one that stalls anywhere hyper has no timer.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, Request, Response, StatusCode};
use futures::future::BoxFuture;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// What bounds the HTTP server's connections; see `McpServer`'s setters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Limits {
    pub(super) max_connections: usize,
    pub(super) header_timeout: Duration,
    pub(super) body_timeout: Duration,
    pub(super) idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// Serves `router` on `listener` until `shutdown`; then calls `stopping`,
/// accepts no more, lets each connection finish the request it is
/// answering, and returns when all have closed.
pub(super) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
    stopping: impl FnOnce(),
) -> io::Result<()> {
    // `acquire_many` counts in `u32`.
    let max = limits.max_connections.clamp(1, u32::MAX as usize);
    let slots = Arc::new(Semaphore::new(max));
    let open = Arc::new(Open {
        count: AtomicUsize::new(0),
        max,
    });
    let (stop, stopped) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        tokio::spawn(connection(
            stream,
            router.clone(),
            limits,
            stopped.clone(),
            Admitted::new(&open, slot),
        ));
    }
    stopping();
    // Connections still waiting in the backlog are refused from here.
    drop(listener);
    let _ = stop.send(true);
    // Every slot back: every connection closed.
    let _ = slots.acquire_many(max as u32).await;
    Ok(())
}

/// As hyper's own examples and axum do: a connection that failed before it
/// was accepted is skipped; anything else (out of file descriptors) is
/// logged and waited out, rather than spun on.
async fn accept_failed(error: io::Error) {
    if matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(%error, "accepting an MCP connection failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// One connection, served until it closes, times out or is stopped; its
/// slot is given back when this returns.
async fn connection(
    stream: TcpStream,
    router: axum::Router,
    limits: Limits,
    mut stopped: watch::Receiver<bool>,
    admitted: Admitted,
) {
    let _ = stream.set_nodelay(true);
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Tracked {
        io: stream,
        activity: Arc::clone(&activity),
    });
    let service = Service {
        router: TowerToHyperService::new(router),
        activity: Arc::clone(&activity),
        body_timeout: limits.body_timeout,
        open: Arc::clone(&admitted.open),
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let mut served = pin!(builder.serve_connection(io, service));
    let mut stopping = false;
    loop {
        tokio::select! {
            outcome = served.as_mut() => {
                if let Err(error) = outcome {
                    tracing::debug!(%error, "an MCP connection ended");
                }
                return;
            }
            () = activity.idle(limits.idle_timeout) => {
                // Dropping the connection closes it, and frees what it held.
                tracing::debug!(
                    idle_timeout = ?limits.idle_timeout,
                    "closing an MCP connection idle past idle_timeout"
                );
                return;
            }
            _ = stopped.wait_for(|stop| *stop), if !stopping => {
                // Ends the connection after the request it is answering.
                served.as_mut().graceful_shutdown();
                stopping = true;
            }
        }
    }
}

/// How many connections are being served, of at most `max`.
struct Open {
    count: AtomicUsize,
    max: usize,
}

/// A connection's slot, given back (and the count of open connections
/// lowered) when it is dropped.
struct Admitted {
    open: Arc<Open>,
    _slot: OwnedSemaphorePermit,
}

impl Admitted {
    fn new(open: &Arc<Open>, slot: OwnedSemaphorePermit) -> Admitted {
        open.count.fetch_add(1, Ordering::AcqRel);
        Admitted {
            open: Arc::clone(open),
            _slot: slot,
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.open.count.fetch_sub(1, Ordering::AcqRel);
    }
}

/// When a connection last moved a byte, and how many of its requests are
/// being answered.
struct Activity {
    origin: Instant,
    /// Milliseconds from `origin`.
    last: AtomicU64,
    busy: AtomicUsize,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            origin: Instant::now(),
            last: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
        }
    }

    fn touch(&self) {
        let now = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.origin + Duration::from_millis(self.last.load(Ordering::Relaxed))
    }

    /// Completes once no byte has moved for `timeout` while no request was
    /// being answered.
    async fn idle(&self, timeout: Duration) {
        loop {
            if self.busy.load(Ordering::Acquire) > 0 {
                // A call may take long and move nothing; the end of its
                // answer touches the clock.
                tokio::time::sleep(timeout).await;
                continue;
            }
            let deadline = self.last() + timeout;
            if deadline <= Instant::now() {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// A request being answered; the connection is not idle meanwhile.
struct Busy(Arc<Activity>);

impl Busy {
    fn new(activity: Arc<Activity>) -> Busy {
        activity.busy.fetch_add(1, Ordering::AcqRel);
        Busy(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The socket, noting each read or write that moved a byte.
struct Tracked<T> {
    io: T,
    activity: Arc<Activity>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Tracked<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.touch();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tracked<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            this.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            this.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// The router, with each request's body given `body_timeout`.
struct Service {
    router: TowerToHyperService<axum::Router>,
    activity: Arc<Activity>,
    body_timeout: Duration,
    /// The connections being served: at the cap, the answer closes its
    /// connection.
    open: Arc<Open>,
}

impl hyper::service::Service<Request<Incoming>> for Service {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let busy = Busy::new(Arc::clone(&self.activity));
        let timed_out = Arc::new(AtomicBool::new(false));
        let timeout = self.body_timeout;
        let request = request.map(|body| {
            Body::new(Deadline {
                body,
                deadline: Instant::now() + timeout,
                sleep: None,
                timed_out: Arc::clone(&timed_out),
            })
        });
        let answer = hyper::service::Service::call(&self.router, request);
        let open = Arc::clone(&self.open);
        Box::pin(async move {
            let mut response = answer.await?;
            drop(busy);
            if timed_out.load(Ordering::Acquire) {
                // rmcp answers a body it could not read with a 500; the
                // client is told which limit it met, and the connection
                // (whose body was not read to its end) closes.
                return Ok(body_timed_out(timeout));
            }
            if open.count.load(Ordering::Acquire) >= open.max {
                // Every slot is taken: this connection's turn ends with this
                // answer, and one waiting to be accepted gets the slot.
                response.headers_mut().insert(
                    header::CONNECTION,
                    header::HeaderValue::from_static("close"),
                );
            }
            Ok(response)
        })
    }
}

fn body_timed_out(timeout: Duration) -> Response<Body> {
    let mut response = Response::new(Body::from(format!(
        "the request body did not arrive within {timeout:?} (limit `body_timeout`)"
    )));
    *response.status_mut() = StatusCode::REQUEST_TIMEOUT;
    let headers = response.headers_mut();
    headers.insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// A request body that fails once its deadline passes.
struct Deadline {
    body: Incoming,
    deadline: Instant,
    /// Made the first time the body waits: a body that comes in one go
    /// costs no timer.
    sleep: Option<Pin<Box<Sleep>>>,
    timed_out: Arc<AtomicBool>,
}

/// The error of a body past its deadline.
#[derive(Debug)]
struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive within `body_timeout`")
    }
}

impl std::error::Error for BodyTimedOut {}

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let deadline = this.deadline;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.as_mut().poll(cx).is_ready() {
            this.timed_out.store(true, Ordering::Release);
            return Poll::Ready(Some(Err(Box::new(BodyTimedOut))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
