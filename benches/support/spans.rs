//! A `tracing` subscriber that wants every span and counts them, keeping
//! nothing else: the cost of spans being recorded, for the dispatch bench
//! and `examples/dispatch_overhead.rs`, against the cost with no subscriber.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Counts the spans it is given and the fields recorded on them.
#[derive(Clone, Default)]
pub(crate) struct Counting(Arc<Counts>);

#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) spans: AtomicU64,
    pub(crate) records: AtomicU64,
}

impl Counting {
    /// The spans seen so far.
    pub(crate) fn spans(&self) -> u64 {
        self.0.spans.load(Ordering::Relaxed)
    }
}

impl Subscriber for Counting {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(self.0.spans.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {
        self.0.records.fetch_add(1, Ordering::Relaxed);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
