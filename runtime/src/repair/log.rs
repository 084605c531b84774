//! The record of the repairs made: the first [`KEPT_PER_KIND`] of each kind
//! and a count of each, so that 10 MB of `"` costs a few counters rather than
//! a record per quote. The parser backtracks, so the log can return to a
//! point ([`Since`]) exactly.

use super::{Repair, RepairKind};

/// How many repairs of each kind are kept; the rest are only counted.
pub(super) const KEPT_PER_KIND: usize = 5;

const KINDS: usize = RepairKind::ALL.len();

pub(super) struct Log {
    /// The first repairs of each kind, in the order they were recorded.
    kept: Vec<Repair>,
    /// How many of each kind were recorded, kept or not.
    counts: [usize; KINDS],
    /// The sum of `counts`.
    total: usize,
}

/// A state of the log to return to.
#[derive(Clone)]
pub(super) struct Since {
    kept: usize,
    counts: [usize; KINDS],
    total: usize,
}

impl Log {
    pub(super) fn new() -> Log {
        Log {
            // Room for a text's usual handful of repairs, without growing.
            kept: Vec::with_capacity(16),
            counts: [0; KINDS],
            total: 0,
        }
    }

    #[inline]
    pub(super) fn record(&mut self, repair: Repair) {
        let count = &mut self.counts[repair.kind as usize];
        if *count < KEPT_PER_KIND {
            self.kept.push(repair);
        }
        *count += 1;
        self.total += 1;
    }

    /// Counts `n` more repairs of `kind` beyond those kept (from a log that
    /// kept its first ones already).
    pub(super) fn count_more(&mut self, kind: RepairKind, n: usize) {
        let count = &mut self.counts[kind as usize];
        // The first ones of the kind were recorded: none of these is kept.
        debug_assert!(n == 0 || *count >= KEPT_PER_KIND);
        *count += n;
        self.total += n;
    }

    /// How many repairs of `kind` were recorded.
    pub(super) fn count(&self, kind: RepairKind) -> usize {
        self.counts[kind as usize]
    }

    /// How many repairs were recorded.
    pub(super) fn total(&self) -> usize {
        self.total
    }

    pub(super) fn since(&self) -> Since {
        Since {
            kept: self.kept.len(),
            counts: self.counts,
            total: self.total,
        }
    }

    /// Forgets every repair recorded after `since`.
    pub(super) fn reset(&mut self, since: &Since) {
        self.kept.truncate(since.kept);
        self.counts = since.counts;
        self.total = since.total;
    }

    /// Forgets the last repair of `kind`, recorded lately (perhaps with
    /// others after it).
    pub(super) fn undo_last(&mut self, kind: RepairKind) {
        let count = &mut self.counts[kind as usize];
        if *count <= KEPT_PER_KIND {
            let last = self.kept.iter().rposition(|r| r.kind == kind);
            debug_assert!(last.is_some(), "no {kind:?} to forget");
            if let Some(last) = last {
                self.kept.remove(last);
            }
        }
        *count -= 1;
        self.total -= 1;
    }

    /// The first repair recorded after `since` whose kind `refused` says
    /// no to: the kept one, or, when every such repair went uncounted, one
    /// of its kind at `at`.
    pub(super) fn first_since(
        &self,
        since: &Since,
        at: usize,
        refused: impl Fn(RepairKind) -> bool,
    ) -> Option<Repair> {
        if let Some(repair) = self.kept[since.kept..].iter().find(|r| refused(r.kind)) {
            return Some(*repair);
        }
        RepairKind::ALL
            .iter()
            .find(|&&kind| {
                self.counts[kind as usize] > since.counts[kind as usize] && refused(kind)
            })
            .map(|&kind| Repair { kind, at })
    }

    /// The kept repairs, in the order of their positions in the input, and
    /// how many of each kind were not kept. Takes them by reference, so that
    /// the counts are not copied with the log (the log is left empty).
    pub(super) fn finish(&mut self) -> (Vec<Repair>, Vec<(RepairKind, usize)>) {
        let mut kept = std::mem::take(&mut self.kept);
        let (counts, total) = (&self.counts, self.total);
        if !kept.is_sorted_by_key(|repair| repair.at) {
            kept.sort_by_key(|repair| repair.at);
        }
        // Every repair kept: nothing omitted (the usual case).
        if kept.len() == total {
            return (kept, Vec::new());
        }
        let mut omitted = Vec::new();
        for (kind, &count) in RepairKind::ALL.iter().zip(counts) {
            if count > KEPT_PER_KIND {
                omitted.push((*kind, count - KEPT_PER_KIND));
            }
        }
        (kept, omitted)
    }
}
