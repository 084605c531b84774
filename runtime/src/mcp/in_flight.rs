//! The cap on the requests a peer has in flight over one byte stream
//! (stdio, a pipe): backpressure for a peer that sends and does not read.
//!
//! rmcp's service loop reads the next message as soon as it can, spawns a
//! task for each request, and spawns another for each answer's write. A peer
//! that writes requests and never reads its answers so makes the server hold
//! every answer it cannot write, without end (200,000 `tools/list` lines
//! grew a server past 1 GB). [`Capped`] wraps the transport: while `max`
//! requests have been handed to rmcp whose answers are not yet written, a
//! further request waits in a queue of at most `max`, and once that is full
//! nothing more is read, so what the peer sends waits in the pipe (whose
//! buffer is the kernel's, and bounded). The server then holds at most `max`
//! answers and `max` waiting requests.
//!
//! The queue is there so that notifications are still read at the cap: a
//! client whose calls hang cancels them (`notifications/cancelled`), and a
//! cancellation behind one request too many would otherwise never be read.
//! A cancelled request no longer counts (rmcp drops its answer unwritten and
//! drops the call); one cancelled while queued is never handed on.
//!
//! An answer counts as written when the transport's write of it completes.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientNotification, JsonRpcMessage, JsonRpcRequest, RequestId};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::Semaphore;

/// A server transport that stops reading while `max` requests wait for
/// their answers to be written.
pub(super) struct Capped<T> {
    inner: T,
    state: Arc<State>,
    /// Requests read past the cap, in order; at most `max`.
    waiting: VecDeque<Request>,
}

type Request = JsonRpcRequest<<RoleServer as rmcp::service::ServiceRole>::PeerReq>;

struct State {
    /// One permit per request that may still be read.
    free: Semaphore,
    /// The requests read and not yet answered, by id, each with how many
    /// were read under that id (a peer may reuse one).
    open: Mutex<HashMap<RequestId, u32>>,
    max: usize,
}

impl<T> Capped<T> {
    /// `max` is at least 1 (with none, nothing would ever be read).
    pub(super) fn new(inner: T, max: usize) -> Capped<T> {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        Capped {
            inner,
            state: Arc::new(State {
                free: Semaphore::new(max),
                open: Mutex::new(HashMap::new()),
                max,
            }),
            waiting: VecDeque::new(),
        }
    }
}

impl State {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, u32>> {
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The request `id` is handed to rmcp: it holds a slot (whose permit the
    /// caller forgets) until it is answered.
    fn hold(&self, id: &RequestId) {
        *self.open().entry(id.clone()).or_insert(0) += 1;
    }

    /// The request `id` is answered (or will never be): its slots are free.
    ///
    /// Every request under the id is released at once: rmcp writes at most
    /// one answer per id that is in flight (a second request under the same
    /// id replaces the first's entry, and its answer is dropped), so waiting
    /// for a second answer would hold the slot for ever.
    fn release(&self, id: &RequestId) {
        let released = self.open().remove(id).unwrap_or(0);
        if released > 0 {
            self.free.add_permits(released as usize);
        }
    }
}

impl<T> Capped<T> {
    /// The first waiting request, if a slot is free for it.
    fn hand_on_waiting(&mut self) -> Option<Request> {
        let permit = self.state.free.try_acquire().ok()?;
        let request = self.waiting.pop_front()?;
        self.state.hold(&request.id);
        // Given back by `release` when the answer is written.
        permit.forget();
        Some(request)
    }
}

impl<T> Transport<RoleServer> for Capped<T>
where
    T: Transport<RoleServer>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let send = self.inner.send(item);
        let state = Arc::clone(&self.state);
        async move {
            let sent = send.await;
            // Written, or the transport is broken: either way it is held no
            // longer.
            if let Some(id) = answers {
                state.release(&id);
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Cancel-safe, as rmcp needs (it polls `receive` in a `select!`):
        // the inner read is, waiting for a permit is, and the queue changes
        // only between awaits.
        loop {
            if !self.waiting.is_empty() {
                if let Some(request) = self.hand_on_waiting() {
                    return Some(JsonRpcMessage::Request(request));
                }
                if self.waiting.len() >= self.state.max {
                    tracing::debug!(
                        max_in_flight = self.state.max,
                        "the MCP peer has max_in_flight requests unanswered and as many waiting; \
                         reading no more until answers are written"
                    );
                    // A slot frees when an answer is written.
                    drop(self.state.free.acquire().await.ok()?);
                    continue;
                }
            }
            let message = if self.waiting.is_empty() {
                self.inner.receive().await?
            } else {
                tokio::select! {
                    // A slot freed: hand on the first waiting request.
                    permit = self.state.free.acquire() => {
                        drop(permit.ok()?);
                        continue;
                    }
                    message = self.inner.receive() => message?,
                }
            };
            match message {
                JsonRpcMessage::Request(request) => {
                    if self.waiting.is_empty() {
                        if let Ok(permit) = self.state.free.try_acquire() {
                            self.state.hold(&request.id);
                            permit.forget();
                            return Some(JsonRpcMessage::Request(request));
                        }
                    }
                    self.waiting.push_back(request);
                }
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancelled) =
                        &notification.notification
                    {
                        if let Some(id) = &cancelled.params.request_id {
                            // Never handed on, if it waits; its slot freed
                            // if it is in flight.
                            self.waiting.retain(|request| request.id != *id);
                            self.state.release(id);
                        }
                    }
                    return Some(JsonRpcMessage::Notification(notification));
                }
                other => return Some(other),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
