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

    #[inline]
    pub(super) fn index(&self, name: &str) -> Option<usize> {
        // A scan beats hashing for the handful of tools most toolboxes hold.
        if self.entries.len() <= SCAN_LIMIT {
            self.entries
                .iter()
                .position(|entry| same_name(entry.spec.name(), name))
        } else {
            self.by_name.get(name).copied()
        }
    }

    #[inline]
    pub(super) fn entry(&self, name: &str, allowed: EffectSet) -> Result<&Entry, ToolError> {
        self.lookup(name, allowed).map(|(_, entry)| entry)
    }

    /// The tool named `name` and its position, if it is here and allowed.
    #[inline]
    pub(super) fn lookup(
        &self,
        name: &str,
        allowed: EffectSet,
    ) -> Result<(usize, &Entry), ToolError> {
        let Some(index) = self.index(name) else {
            return Err(self.unknown(name, allowed));
        };
        let entry = &self.entries[index];
        if !entry.spec.effects().is_subset_of(allowed) {
            return Err(ToolError::EffectDenied {
                tool: name.to_owned(),
                effects: entry.spec.effects(),
                allowed,
            });
        }
        Ok((index, entry))
    }

    /// Off the fast path: a name the toolbox does not have. A hostile name
    /// (a model can send 200 KB of one) gets no suggestions and is shortened.
    #[cold]
    fn unknown(&self, name: &str, allowed: EffectSet) -> ToolError {
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

/// Whether two names are the same: a short name (most are) compared in a
/// word or two, inline, rather than by a call to `memcmp`.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        // Two words that overlap cover the name.
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        0..=7 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// Eight bytes of `bytes` from `at`.
#[inline]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_ne_bytes(word)
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
            "a_very_long_tool_name_indeed",
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
