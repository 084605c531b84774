//! Time without an async runtime: [`Sleep`], a future that is ready at an
//! instant, [`within`], a future raced against a deadline, and
//! [`within_for`], a call raced against its time limit and a deadline.
//!
//! One thread, started on first use, keeps the pending deadlines in order
//! and wakes each task when its time comes; a `Sleep` dropped early takes
//! its deadline out. So any executor can wait (recovery's backoff, an
//! agent's deadlines) without a thread per wait and without naming a
//! runtime.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The deadlines waited for, earliest first, each with the task to wake.
#[derive(Default)]
struct Timers {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    next_id: u64,
    waiting: BTreeMap<(Instant, u64), Waker>,
}

fn timers() -> &'static Timers {
    static TIMERS: OnceLock<&'static Timers> = OnceLock::new();
    TIMERS.get_or_init(|| {
        let timers: &'static Timers = Box::leak(Box::default());
        std::thread::Builder::new()
            .name("typed-tools-timer".into())
            .spawn(move || timers.run())
            .expect("the timer thread starts");
        timers
    })
}

impl Timers {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wakes each task whose deadline has passed, then sleeps until the next.
    fn run(&self) {
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(entry) = state.waiting.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                due.push(entry.remove());
            }
            if !due.is_empty() {
                // Woken outside the lock: a waker may poll at once.
                drop(state);
                due.into_iter().for_each(Waker::wake);
                state = self.lock();
                continue;
            }
            state = match state.waiting.first_key_value() {
                Some(((at, _), _)) => {
                    let wait = at.saturating_duration_since(now);
                    self.changed
                        .wait_timeout(state, wait)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0
                }
                None => self
                    .changed
                    .wait(state)
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            };
        }
    }
}

/// A future ready at an instant.
#[must_use = "a sleep does nothing unless it is awaited"]
pub(crate) struct Sleep {
    at: Instant,
    /// Its place among the deadlines waited for, once it has waited.
    key: Option<(Instant, u64)>,
}

impl Sleep {
    /// Ready at `at`.
    pub(crate) fn until(at: Instant) -> Sleep {
        Sleep { at, key: None }
    }

    /// Ready after `duration`.
    pub(crate) fn new(duration: Duration) -> Sleep {
        let now = Instant::now();
        Sleep::until(now.checked_add(duration).unwrap_or(now + FAR))
    }
}

/// Far enough to be never, near enough to add to an instant.
const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            if let Some(key) = self.key.take() {
                timers().lock().waiting.remove(&key);
            }
            return Poll::Ready(());
        }
        let timers = timers();
        let mut state = timers.lock();
        let key = match self.key {
            Some(key) => key,
            None => {
                state.next_id += 1;
                (self.at, state.next_id)
            }
        };
        let first = state.waiting.first_key_value().map(|(k, _)| *k);
        state.waiting.insert(key, cx.waker().clone());
        self.key = Some(key);
        drop(state);
        // Only a new earliest deadline changes how long the thread sleeps.
        if first.is_none_or(|first| key < first) {
            timers.changed.notify_one();
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            timers().lock().waiting.remove(&key);
        }
    }
}

/// The deadline passed first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Elapsed;

/// `future`'s output, or [`Elapsed`] if `deadline` passes first (`None`:
/// no deadline). The future is polled first, and the timer is armed only if
/// it is not ready, so a future ready at once costs no timer. Each later
/// poll reads the clock before it polls the future: a future that keeps
/// waking itself (work that gives way now and then, but is never waiting)
/// is stopped at the deadline too, not only one that waits.
pub(crate) async fn within<F: Future>(
    future: F,
    deadline: Option<Instant>,
) -> Result<F::Output, Elapsed> {
    let mut future = std::pin::pin!(future);
    let mut sleep: Option<Sleep> = None;
    futures::future::poll_fn(|cx| {
        if sleep.is_some() && deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Poll::Ready(Err(Elapsed));
        }
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let Some(deadline) = deadline else {
            return Poll::Pending;
        };
        let sleep = sleep.get_or_insert_with(|| Sleep::until(deadline));
        Pin::new(sleep).poll(cx).map(|()| Err(Elapsed))
    })
    .await
}

/// A call stopped at its time limit: after how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimedOut {
    /// The time it was given: its limit, or what was left before the
    /// deadline if less.
    pub(crate) after: Duration,
}

/// `future`'s output, or `timed_out`'s for a [`TimedOut`] if it takes
/// longer than `limit`, or past `deadline` (`None`: none). The time counts
/// from the first poll that finds it not ready: a future ready at once
/// reads no clock and arms no timer (a sync tool's call, the usual call in
/// a plan).
pub(crate) fn within_for<F, G>(
    future: F,
    limit: Duration,
    deadline: Option<Instant>,
    timed_out: G,
) -> WithinFor<F, G>
where
    F: Future + Unpin,
    G: Fn(TimedOut) -> F::Output + Unpin,
{
    WithinFor {
        future,
        limit,
        deadline,
        timed_out,
        armed: None,
    }
}

/// A future raced against its time limit and a deadline: [`within_for`].
/// A struct rather than an `async fn`, and of the future's own output, so
/// that a call ready at its first poll (the usual one) costs one more poll
/// and the move of a few words, not another state machine around it and
/// another move of its result.
pub(crate) struct WithinFor<F, G> {
    future: F,
    limit: Duration,
    deadline: Option<Instant>,
    /// Makes the output of a future stopped at its limit.
    timed_out: G,
    /// Once the future has waited: when it is stopped (`None` inside:
    /// never), and the time that gives it. Boxed, so that a call ready at
    /// once carries one word of it.
    armed: Option<Box<Option<(Sleep, Duration)>>>,
}

impl<F, G> Future for WithinFor<F, G>
where
    F: Future + Unpin,
    G: Fn(TimedOut) -> F::Output + Unpin,
{
    type Output = F::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        if let Poll::Ready(output) = Pin::new(&mut this.future).poll(cx) {
            return Poll::Ready(output);
        }
        this.wait(cx).map(&this.timed_out)
    }
}

impl<F, G> WithinFor<F, G> {
    /// The future is not ready: the timer, armed the first time; ready
    /// when it has gone off.
    #[inline(never)]
    fn wait(&mut self, cx: &mut Context<'_>) -> Poll<TimedOut> {
        let (limit, deadline) = (self.limit, self.deadline);
        let armed = self.armed.get_or_insert_with(|| {
            let now = Instant::now();
            let until = match (now.checked_add(limit), deadline) {
                (Some(end), Some(deadline)) => Some(end.min(deadline)),
                (end, deadline) => end.or(deadline),
            };
            Box::new(until.map(|until| (Sleep::until(until), until.saturating_duration_since(now))))
        });
        match armed.as_mut() {
            Some((sleep, after)) => Pin::new(sleep)
                .poll(cx)
                .map(|()| TimedOut { after: *after }),
            None => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work that gives way after each step but never waits: always woken,
    /// never ready until `until` (a bound, so that the test ends if the
    /// deadline fails).
    struct Busy {
        until: Instant,
    }

    impl Future for Busy {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
            if Instant::now() >= self.until {
                return Poll::Ready(());
            }
            std::thread::sleep(Duration::from_millis(1));
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn a_deadline_stops_work_that_never_waits() {
        let start = Instant::now();
        let busy = Busy {
            until: start + Duration::from_secs(10),
        };
        let deadline = start + Duration::from_millis(50);
        let result = futures::executor::block_on(within(busy, Some(deadline)));
        assert_eq!(result, Err(Elapsed));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn no_sleep_ends_before_its_deadline() {
        let start = Instant::now();
        let ended = std::sync::Mutex::new(Vec::new());
        futures::executor::block_on(async {
            let wait = |ms: u64| {
                let ended = &ended;
                async move {
                    Sleep::new(Duration::from_millis(ms)).await;
                    ended.lock().unwrap().push((ms, start.elapsed()));
                }
            };
            futures::join!(wait(30), wait(10), wait(20));
        });
        let ended = ended.into_inner().unwrap();
        assert_eq!(ended.len(), 3);
        for (ms, elapsed) in ended {
            assert!(
                elapsed >= Duration::from_millis(ms),
                "{ms} ms ended at {elapsed:?}"
            );
        }
    }

    #[test]
    fn within_gives_the_output_or_elapsed() {
        let never = futures::future::pending::<()>();
        let soon = Instant::now() + Duration::from_millis(5);
        assert_eq!(
            futures::executor::block_on(within(never, Some(soon))),
            Err(Elapsed)
        );
        let ready = futures::future::ready(7);
        assert_eq!(
            futures::executor::block_on(within(ready, Some(Instant::now()))),
            Ok(7)
        );
        assert_eq!(
            futures::executor::block_on(within(async { 8 }, None)),
            Ok(8)
        );
    }

    #[test]
    fn within_for_counts_from_the_first_wait_and_keeps_to_the_deadline() {
        let never = || futures::future::pending::<Result<u32, TimedOut>>();
        let limit = Duration::from_millis(5);
        assert_eq!(
            futures::executor::block_on(within_for(never(), limit, None, Err)),
            Err(TimedOut { after: limit })
        );
        // The deadline nearer than the limit: what was left before it.
        let soon = Instant::now() + Duration::from_millis(5);
        let stopped =
            futures::executor::block_on(within_for(never(), Duration::MAX, Some(soon), Err));
        assert!(stopped.unwrap_err().after <= Duration::from_millis(5));
        let ready = futures::future::ready(Ok(9));
        assert_eq!(
            futures::executor::block_on(within_for(ready, Duration::ZERO, None, Err)),
            Ok(9)
        );
    }

    #[test]
    fn a_dropped_sleep_leaves_nothing_behind() {
        let far = Sleep::new(Duration::from_secs(3600));
        let mut far = Box::pin(far);
        let waker = futures::task::noop_waker();
        assert!(far
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let key = far.key.expect("waiting");
        assert!(timers().lock().waiting.contains_key(&key));
        drop(far);
        assert!(!timers().lock().waiting.contains_key(&key));
    }
}
