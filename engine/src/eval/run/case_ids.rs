//! The case ids of a suite as the checking pass sees them: each id's
//! 64-bit hash (keyed per process, so no fixture can aim two ids at one
//! hash), to refuse a duplicate and to place a resumed run's journal lines.
//!
//! A suite may hold millions of cases, so this is the one part of the
//! checking pass that grows with the suite, and it is kept small: the hash
//! of each case by index (8 bytes) and a table of indices (4 bytes and a
//! control byte a slot), where a map of hash to index took 17 bytes a slot
//! (both with the slack of growing by doubling).

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Case ids seen so far, as hashes with the first index of each (never the
/// ids themselves).
#[derive(Default)]
pub struct CaseIds {
    /// The hash of each case's id, by case index (0 where the checking pass
    /// saw no id: the case's batch had problems).
    hashes: Vec<u64>,
    /// The index of the first case of each distinct id, found by its hash.
    table: HashTable<u32>,
    hasher: std::hash::RandomState,
}

/// A suite of more cases than an index of the table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyCases;

impl CaseIds {
    /// The suite index of case `id`, if it is one of the suite's.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(id);
        self.find(hash)
    }

    fn find(&self, hash: u64) -> Option<usize> {
        let hashes = &self.hashes;
        self.table
            .find(hash, |&i| hashes[i as usize] == hash)
            .map(|&i| i as usize)
    }

    /// Records `id` at `index` (indices rise from one call to the next);
    /// returns the earlier index of a duplicate.
    pub fn insert(&mut self, id: &str, index: usize) -> Result<Option<usize>, TooManyCases> {
        let hash = self.hasher.hash_one(id);
        if let Some(first) = self.find(hash) {
            return Ok(Some(first));
        }
        let slot = u32::try_from(index).map_err(|_| TooManyCases)?;
        if self.hashes.len() <= index {
            self.hashes.resize(index + 1, 0);
        }
        self.hashes[index] = hash;
        let hashes = &self.hashes;
        self.table
            .insert_unique(hash, slot, |&i| hashes[i as usize]);
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_name_the_first_case_and_ids_are_found_by_index() {
        let mut ids = CaseIds::default();
        assert_eq!(ids.insert("a", 0), Ok(None));
        assert_eq!(ids.insert("b", 1), Ok(None));
        // Cases 2 and 3 had problems: no id was seen for them.
        assert_eq!(ids.insert("c", 4), Ok(None));
        assert_eq!(ids.insert("a", 5), Ok(Some(0)));
        assert_eq!(ids.insert("c", 6), Ok(Some(4)));
        assert_eq!(ids.index_of("a"), Some(0));
        assert_eq!(ids.index_of("b"), Some(1));
        assert_eq!(ids.index_of("c"), Some(4));
        assert_eq!(ids.index_of("d"), None);
        assert_eq!(ids.index_of(""), None);
    }

    #[test]
    fn a_large_suite_keeps_every_id_apart() {
        let mut ids = CaseIds::default();
        let n = 200_000;
        for i in 0..n {
            assert_eq!(ids.insert(&format!("case-{i:07}"), i), Ok(None));
        }
        for i in (0..n).step_by(997) {
            assert_eq!(ids.index_of(&format!("case-{i:07}")), Some(i));
            assert_eq!(ids.insert(&format!("case-{i:07}"), n + i), Ok(Some(i)));
        }
        assert_eq!(ids.index_of("case-9999999"), None);
    }

    #[test]
    fn an_index_past_the_table_is_refused() {
        let mut ids = CaseIds::default();
        // Not allocated: the index is refused before the hashes grow.
        assert_eq!(ids.insert("x", u32::MAX as usize + 1), Err(TooManyCases));
    }
}
