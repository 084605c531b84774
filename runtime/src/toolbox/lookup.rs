//! Finding a tool by name, and the nearest names when there is none.

use std::hash::Hasher;

use super::dispatch::{Entry, Shared};
use crate::effect::EffectSet;
use crate::error::ToolError;

impl Shared {
    pub(super) fn names(&self, allowed: EffectSet) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(move |entry| entry.spec.effects().is_subset_of(allowed))
            .map(|entry| entry.spec.name())
    }

    /// The tool named `name` and its position, whatever its effects.
    #[inline]
    pub(super) fn find(&self, name: &str) -> Option<(usize, &Entry)> {
        // A scan beats hashing for the handful of tools most toolboxes hold.
        if self.entries.len() <= SCAN_LIMIT {
            let name = name.as_bytes();
            let wanted = Words::of(name);
            self.entries
                .iter()
                .enumerate()
                .find(|(_, entry)| wanted.name_is(name, entry.spec.name().as_bytes()))
        } else {
            let index = *self.by_name.get(name)?;
            Some((index, &self.entries[index]))
        }
    }

    #[inline]
    pub(super) fn entry(&self, name: &str, allowed: EffectSet) -> Result<&Entry, ToolError> {
        match self.find(name) {
            Some((_, entry)) if entry.spec.effects().is_subset_of(allowed) => Ok(entry),
            Some((_, entry)) => Err(Shared::denied(name, entry, allowed)),
            None => Err(self.unknown(name, allowed)),
        }
    }

    /// Off the fast path: a tool whose effects are not allowed here.
    #[cold]
    #[inline(never)]
    pub(super) fn denied(name: &str, entry: &Entry, allowed: EffectSet) -> ToolError {
        ToolError::EffectDenied {
            tool: name.to_owned(),
            effects: entry.spec.effects(),
            allowed,
        }
    }

    /// Off the fast path: a name the toolbox does not have. A hostile name
    /// (a model can send 200 KB of one) gets no suggestions and is shortened.
    #[cold]
    #[inline(never)]
    pub(super) fn unknown(&self, name: &str, allowed: EffectSet) -> ToolError {
        const LONGEST: usize = 128;
        let available: Vec<String> = self.names(allowed).map(str::to_owned).collect();
        let suggestions = if name.len() <= LONGEST {
            nearest(name, &available)
        } else {
            Vec::new()
        };
        let name = match name.char_indices().nth(LONGEST) {
            Some((cut, _)) => format!("{}…", &name[..cut]),
            None => name.to_owned(),
        };
        ToolError::UnknownTool {
            name,
            suggestions,
            available,
        }
    }
}

/// A name's length and its bytes read as two words, from its start and
/// from its end: for a name of at most 16 bytes (most are) the two cover
/// every byte (overlapping when shorter), so a name of that length is the
/// same exactly when its words are. Found in a few loads and compares,
/// inline, rather than by a call to `memcmp`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Words {
    len: usize,
    head: u64,
    tail: u64,
}

impl Words {
    #[inline(always)]
    fn of(bytes: &[u8]) -> Words {
        let n = bytes.len();
        let (head, tail) = match n {
            8.. => (word::<8>(bytes, 0), word::<8>(bytes, n - 8)),
            4..=7 => (word::<4>(bytes, 0), word::<4>(bytes, n - 4)),
            2..=3 => (word::<2>(bytes, 0), word::<2>(bytes, n - 2)),
            1 => (u64::from(bytes[0]), 0),
            0 => (0, 0),
        };
        Words { len: n, head, tail }
    }

    /// Whether `other` is `name`, whose words these are.
    #[inline(always)]
    fn name_is(&self, name: &[u8], other: &[u8]) -> bool {
        other.len() == self.len
            && Words::of(other) == *self
            // Past 16 bytes the words cover only the ends: compare all.
            && (self.len <= 16 || other == name)
    }
}

/// `N` bytes of `bytes` from `at`, as a number.
#[inline(always)]
fn word<const N: usize>(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word[..N].copy_from_slice(&bytes[at..at + N]);
    u64::from_le_bytes(word)
}

/// Up to this many tools, a name is found by a scan; past it, by the map.
const SCAN_LIMIT: usize = 8;

/// FNV-1a, for the name map: names are short, and SipHash's protection against
/// flooding buys nothing here, since only the toolbox inserts keys (a model's
/// names are only looked up). SipHash was a sixth of the dispatch overhead.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The names closest to `name`, best first: same letters in another case or
/// separator style, then by edit distance (at most a third of the name).
fn nearest(name: &str, names: &[String]) -> Vec<String> {
    fn fold(s: &str) -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    }
    let wanted = fold(name);
    let limit = (wanted.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|candidate| {
            let folded = fold(candidate);
            let distance = edit_distance(&wanted, &folded);
            let contains =
                wanted.len() >= 3 && (folded.contains(&wanted) || wanted.contains(&folded));
            (distance <= limit || contains).then_some((distance, candidate))
        })
        .collect();
    scored.sort_by_key(|(distance, candidate)| (*distance, candidate.len()));
    scored.into_iter().take(3).map(|(_, c)| c.clone()).collect()
}

/// Damerau-Levenshtein distance (adjacent transpositions count once).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_name(a: &str, b: &str) -> bool {
        Words::of(a.as_bytes()).name_is(a.as_bytes(), b.as_bytes())
    }

    #[test]
    fn same_names() {
        let names = [
            "",
            "a",
            "ab",
            "add",
            "adds",
            "lookup",
            "lookup_a",
            "lookup_ac",
            "lookup_account",
            "lookup_account_s",
            "lookup_account_sa",
            "lookup_account_sab",
            "a_very_long_tool_name_indeed",
            "a_very_long_tool_name_indeeb",
        ];
        for a in names {
            for b in names {
                assert_eq!(same_name(a, b), a == b, "{a:?} {b:?}");
            }
            // Differing in any one byte.
            for at in 0..a.len() {
                let mut other = a.as_bytes().to_vec();
                other[at] ^= 1;
                let other = String::from_utf8(other).unwrap();
                assert!(!same_name(a, &other), "{a:?} {other:?}");
            }
        }
    }

    #[test]
    fn nearest_names() {
        let names: Vec<String> = ["lookup_account", "issue_refund", "send_reply"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(nearest("lookupAccount", &names), ["lookup_account"]);
        assert_eq!(nearest("issue_refnud", &names), ["issue_refund"]);
        assert_eq!(nearest("refund", &names), ["issue_refund"]);
        assert!(nearest("delete_everything", &names).is_empty());
    }
}
