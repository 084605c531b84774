//! [`YieldNow`]: an await point like real I/O, for tests whose calls must
//! interleave. (`futures::pending!` does not wake the task, so an executor
//! with nothing else to do would wait for ever.)

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Pending once (having woken its task), then ready.
pub(crate) struct YieldNow(bool);

impl YieldNow {
    /// A point where the task yields once.
    pub(crate) fn once() -> YieldNow {
        YieldNow(false)
    }
}

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
