//! Exact enumeration of the three-card games: every player hand against every
//! dealer (banker) hand from the remaining 49 cards, 22,100 × 18,424 pairs.
//!
//! How it stays exact and fast: the settlement of a player hand against a dealer
//! hand depends on the dealer hand only through its *outcome class* — dealer not
//! qualified, player higher, player lower, or equal (see [`Class`]). So for each
//! player hand we count the disjoint dealer hands of each class with a tight
//! branch-free loop over bit masks, keep one representative dealer hand per
//! class, and settle that representative once with the engine's own payout
//! function, weighted by the count. Tests check the grouping against the payout
//! functions called on every pair for a sample of player hands.
use crate::rules::card::Card;
use crate::rules::eval3::HandRank3;

use super::par::map_tasks;

/// Number of three-card hands in one deck, C(52, 3).
pub(crate) const HANDS3: usize = 22_100;
/// Dealer hands disjoint from one player hand, C(49, 3).
pub(crate) const DEALER_HANDS3: u32 = 18_424;

/// Every three-card hand of one deck, card indices ascending, in lexicographic order.
pub(crate) fn all_hands3() -> Vec<[Card; 3]> {
    let card = |i: u8| Card::from_index(i).expect("index < 52");
    let mut v = Vec::with_capacity(HANDS3);
    for a in 0..52u8 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                v.push([card(a), card(b), card(c)]);
            }
        }
    }
    v
}

/// The outcome class of a player hand against a dealer hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Class {
    /// The dealer hand is in group 0 (three-card games: does not qualify).
    Unqualified = 0,
    /// Group 1 and the player's key is higher.
    PlayerHigher = 1,
    /// Group 1 and the player's key is lower.
    PlayerLower = 2,
    /// Group 1 and equal keys.
    Equal = 3,
}

impl Class {
    pub(crate) const ALL: [Class; 4] = [Class::Unqualified, Class::PlayerHigher, Class::PlayerLower, Class::Equal];
}

/// What one player hand meets among the disjoint dealer hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClassCounts {
    /// Dealer hands of each [`Class`]; they sum to 18,424.
    pub counts: [u32; 4],
    /// One dealer hand (index into the hand list) of each class with a non-zero count.
    pub reps: [Option<u32>; 4],
}

/// The hands of a game as the counting loop sees them.
pub(crate) struct HandTable {
    /// Card masks.
    pub masks: Vec<u64>,
    /// Comparison keys: higher is better for the hand's holder.
    pub keys: Vec<u32>,
    /// Group of each hand as a dealer hand: 0 = "unqualified", 1 = compared.
    pub group1: Vec<bool>,
}

impl HandTable {
    /// Builds the table from one closure per hand.
    pub(crate) fn new(hands: &[[Card; 3]], key: impl Fn(&[Card; 3]) -> (u32, bool)) -> HandTable {
        let mut t = HandTable {
            masks: Vec::with_capacity(hands.len()),
            keys: Vec::with_capacity(hands.len()),
            group1: Vec::with_capacity(hands.len()),
        };
        for h in hands {
            let (k, g) = key(h);
            t.masks.push(h.iter().fold(0u64, |m, c| m | 1 << c.index()));
            t.keys.push(k);
            t.group1.push(g);
        }
        t
    }

    /// Counts, for every player hand, the disjoint dealer hands of each class,
    /// with a representative of each non-empty class. Split over `threads`.
    pub(crate) fn classify_all(&self, threads: usize) -> Vec<ClassCounts> {
        let all: Vec<usize> = (0..self.masks.len()).collect();
        self.classify_some(&all, threads)
    }

    /// [`Self::classify_all`] for some player hands only (indices into the table).
    pub(crate) fn classify_some(&self, players: &[usize], threads: usize) -> Vec<ClassCounts> {
        let n = self.masks.len();
        // Dealer hands sorted by (group, key), to find representatives fast.
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&j| (self.group1[j as usize], self.keys[j as usize], j));
        let first_group1 = order.partition_point(|&j| !self.group1[j as usize]);
        let groups: Vec<u32> = self.group1.iter().map(|&g| g as u32).collect();
        const CHUNK: usize = 256;
        let chunks = map_tasks(players.len().div_ceil(CHUNK), threads, |chunk| {
            let some = &players[chunk * CHUNK..((chunk + 1) * CHUNK).min(players.len())];
            some.iter().map(|&i| self.classify_one(i, &groups, &order, first_group1)).collect::<Vec<_>>()
        });
        chunks.into_iter().flatten().collect()
    }

    fn classify_one(&self, i: usize, groups: &[u32], order: &[u32], first_group1: usize) -> ClassCounts {
        let (pm, pk) = (self.masks[i], self.keys[i]);
        let (mut unq, mut higher, mut lower, mut compared) = (0u32, 0u32, 0u32, 0u32);
        for ((&m, &k), &g) in self.masks.iter().zip(&self.keys).zip(groups) {
            let free = (m & pm == 0) as u32;
            unq += free & (g ^ 1);
            let fq = free & g;
            compared += fq;
            higher += fq & (k < pk) as u32;
            lower += fq & (k > pk) as u32;
        }
        let counts = [unq, higher, lower, compared - higher - lower];
        let free = |j: u32| self.masks[j as usize] & pm == 0;
        let (g0, g1) = order.split_at(first_group1);
        let mut reps = [None; 4];
        if counts[0] > 0 {
            reps[0] = g0.iter().copied().find(|&j| free(j));
        }
        if counts[1] > 0 {
            reps[1] = g1.iter().copied().find(|&j| free(j)).filter(|&j| self.keys[j as usize] < pk);
        }
        if counts[2] > 0 {
            reps[2] = g1.iter().rev().copied().find(|&j| free(j)).filter(|&j| self.keys[j as usize] > pk);
        }
        if counts[3] > 0 {
            let lo = g1.partition_point(|&j| self.keys[j as usize] < pk);
            let hi = g1.partition_point(|&j| self.keys[j as usize] <= pk);
            reps[3] = g1[lo..hi].iter().copied().find(|&j| free(j));
        }
        debug_assert!(counts.iter().zip(&reps).all(|(&c, r)| (c > 0) == r.is_some()));
        ClassCounts { counts, reps }
    }
}

/// The class of one (player, dealer) pair under a [`HandTable`] (for tests).
#[cfg(test)]
pub(crate) fn class_of(table: &HandTable, player: usize, dealer: usize) -> Class {
    if !table.group1[dealer] {
        return Class::Unqualified;
    }
    match table.keys[player].cmp(&table.keys[dealer]) {
        std::cmp::Ordering::Greater => Class::PlayerHigher,
        std::cmp::Ordering::Less => Class::PlayerLower,
        std::cmp::Ordering::Equal => Class::Equal,
    }
}

/// A short description of a three-card hand by its ranks, e.g. `Q-6-4 (three odd cards)`.
pub(crate) fn describe3(cards: &[Card; 3], rank: HandRank3) -> String {
    let mut c = *cards;
    c.sort_by_key(|c| std::cmp::Reverse(c.rank()));
    let ranks: Vec<&str> = c.iter().map(|c| c.rank().code()).collect();
    format!("{} ({})", ranks.join("-"), rank.category().name())
}
