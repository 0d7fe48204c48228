//! FAST's queue of full random-write log blocks and the choice of the one to reclaim: FIFO
//! (FAST), or second chance (paper 003, spec B.3): a candidate holding more than `threshold`
//! valid pages is passed over once and marked; a marked candidate is taken. A mark is lost as
//! soon as one of the block's pages is invalidated (by a host write or a merge): the block then
//! deserves another chance.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::flash::Pbn;

/// How a passed-over candidate keeps its place (spec B.7 F2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ScMode {
    /// It goes to the tail of the queue (classic second chance).
    #[default]
    MoveToTail,
    /// It keeps its place; a clock hand moves past it.
    Clock,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    Fifo,
    SecondChance { threshold: u32, mode: ScMode },
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    block: Pbn,
    /// The block's valid-page count when it was given its chance. A full log block's valid count
    /// only falls, by invalidations, so the mark holds exactly while the count is unchanged.
    marked_at: Option<u32>,
}

pub struct LogQueue {
    entries: VecDeque<Entry>,
    /// The clock hand (index of the next candidate) in `ScMode::Clock`; 0 otherwise.
    hand: usize,
    selection: Selection,
}

impl LogQueue {
    pub fn new(selection: Selection) -> Self {
        LogQueue { entries: VecDeque::new(), hand: 0, selection }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.hand = 0;
    }

    pub fn blocks(&self) -> impl Iterator<Item = Pbn> + '_ {
        self.entries.iter().map(|e| e.block)
    }

    /// Files a block that has just filled up, at the tail of the fill order. (Under the clock
    /// the hand may be anywhere: the new block is met after the blocks from the hand to the
    /// tail. Moving passed-over blocks to the tail would instead put it behind all of them.)
    pub fn push(&mut self, block: Pbn) {
        self.entries.push_back(Entry { block, marked_at: None });
    }

    /// Whether `block` carries its chance mark, given its valid count now.
    pub fn is_marked(&self, block: Pbn, valid: u32) -> bool {
        self.entries.iter().any(|e| e.block == block && e.marked_at == Some(valid))
    }

    /// Removes and returns the victim; `valid` gives a block's valid pages. Returns how many
    /// candidates were passed over too. The loop ends within one round: nothing is invalidated
    /// while it runs, so a second visit finds the mark.
    pub fn select(&mut self, valid: impl Fn(Pbn) -> u32) -> Option<(Pbn, u64)> {
        if self.entries.is_empty() {
            return None;
        }
        let Selection::SecondChance { threshold, mode } = self.selection else {
            return self.entries.pop_front().map(|e| (e.block, 0));
        };
        let mut skips = 0;
        loop {
            let at = self.hand % self.entries.len();
            let entry = &mut self.entries[at];
            let count = valid(entry.block);
            let marked = entry.marked_at == Some(count);
            if count > threshold && !marked {
                entry.marked_at = Some(count);
                skips += 1;
                match mode {
                    ScMode::MoveToTail => {
                        let e = self.entries.pop_front().expect("not empty");
                        self.entries.push_back(e);
                    }
                    ScMode::Clock => self.hand = (at + 1) % self.entries.len(),
                }
                continue;
            }
            let victim = self.entries.remove(at).expect("in range").block;
            self.hand = if self.entries.is_empty() { 0 } else { at % self.entries.len() };
            return Some((victim, skips));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(selection: Selection, blocks: &[Pbn]) -> LogQueue {
        let mut q = LogQueue::new(selection);
        blocks.iter().for_each(|&b| q.push(b));
        q
    }

    const SC: Selection = Selection::SecondChance { threshold: 0, mode: ScMode::MoveToTail };

    #[test]
    fn fifo_takes_the_oldest_block() {
        let mut q = queue(Selection::Fifo, &[Pbn::new(7), Pbn::new(8), Pbn::new(9)]);
        assert_eq!(q.select(|_| 5), Some((Pbn::new(7), 0)));
        assert_eq!(q.blocks().collect::<Vec<_>>(), vec![8, 9]);
    }

    /// Spec B.3 / Part D: valid counts [5, 0, 3] with n = 0: the second block is the victim and
    /// the first gets its chance.
    #[test]
    fn second_chance_passes_over_a_block_with_valid_pages() {
        let valid = |b: Pbn| [5, 0, 3][b.index()];
        let mut q = queue(SC, &[Pbn::new(0), Pbn::new(1), Pbn::new(2)]);
        assert_eq!(q.select(valid), Some((Pbn::new(1), 1)));
        assert!(q.is_marked(Pbn::new(0), 5) && !q.is_marked(Pbn::new(2), 3));
        assert_eq!(q.blocks().collect::<Vec<_>>(), vec![2, 0], "the marked block moved to the tail");
    }

    /// Spec Part D: [5, 3]: both get a chance, then the first becomes the victim.
    #[test]
    fn when_every_block_has_valid_pages_the_first_marked_one_is_taken() {
        let valid = |b: Pbn| [5, 3][b.index()];
        let mut q = queue(SC, &[Pbn::new(0), Pbn::new(1)]);
        assert_eq!(q.select(valid), Some((Pbn::new(0), 2)));
        assert!(q.is_marked(Pbn::new(1), 3));
    }

    /// The reset rule: an invalidation in a marked block takes its mark away.
    #[test]
    fn an_invalidation_resets_the_mark() {
        let mut counts = [5, 3];
        let mut q = queue(SC, &[Pbn::new(0), Pbn::new(1)]);
        assert_eq!(q.select(|b| counts[b.index()]), Some((Pbn::new(0), 2)));
        q.push(Pbn::new(0));
        counts[1] = 2; // one of block 1's pages was invalidated
        assert!(!q.is_marked(Pbn::new(1), 2));
        assert_eq!(q.select(|b| counts[b.index()]), Some((Pbn::new(1), 2)), "block 1 is passed over again, then taken");
    }

    /// The threshold is strict: a block with exactly `n` valid pages is taken at once.
    #[test]
    fn the_threshold_is_strictly_greater_than() {
        let sc = Selection::SecondChance { threshold: 3, mode: ScMode::MoveToTail };
        let mut q = queue(sc, &[Pbn::new(0), Pbn::new(1)]);
        assert_eq!(q.select(|b| [4, 3][b.index()]), Some((Pbn::new(1), 1)));
    }

    #[test]
    fn clock_keeps_positions_and_moves_its_hand() {
        let sc = Selection::SecondChance { threshold: 0, mode: ScMode::Clock };
        let valid = |b: Pbn| [5, 0, 3][b.index()];
        let mut q = queue(sc, &[Pbn::new(0), Pbn::new(1), Pbn::new(2)]);
        assert_eq!(q.select(valid), Some((Pbn::new(1), 1)));
        assert_eq!(q.blocks().collect::<Vec<_>>(), vec![0, 2], "block 0 kept its place");
        q.push(Pbn::new(1)); // refilled: at the tail of the fill order, ahead of the hand (on block 2)
        assert_eq!(q.blocks().collect::<Vec<_>>(), vec![0, 2, 1]);
        assert_eq!(
            q.select(valid),
            Some((Pbn::new(1), 1)),
            "the hand gives block 2 its chance, then takes empty block 1"
        );
        assert!(q.is_marked(Pbn::new(2), 3) && q.is_marked(Pbn::new(0), 5));
    }

    /// Moving to the tail puts a refilled block behind every passed-over one; the clock meets it
    /// before the blocks behind its hand.
    #[test]
    fn the_two_modes_differ_in_where_a_refilled_block_waits() {
        let valid = |b: Pbn| [5, 0, 4, 0][b.index()];
        for (mode, victim) in [(ScMode::MoveToTail, 0), (ScMode::Clock, 3)] {
            let mut q = queue(Selection::SecondChance { threshold: 0, mode }, &[Pbn::new(0), Pbn::new(1), Pbn::new(2)]);
            assert_eq!(q.select(valid), Some((Pbn::new(1), 1)), "{mode:?}: block 0 passed over, empty block 1 taken");
            q.push(Pbn::new(3));
            // Move to tail: [2, 0, 3]; the clock: [0, 2, 3] with its hand on block 2.
            assert_eq!(q.select(valid), Some((Pbn::new(victim), 1)), "{mode:?}");
        }
    }
}
