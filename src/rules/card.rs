//! Cards, ranks, suits, card sets and shoes.
//!
//! Suit order where suits matter is spades > hearts > clubs > diamonds
//! ("espadas, copas, paus, ouros": stud-2004 Art. 4, qpoker-2004 Art. 4,
//! sangong-1996 annex). The discriminants follow that order so that comparing
//! two `Suit`s, or two `Card`s of equal rank, compares them as the regulations do.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::RulesError;

/// A card suit, ordered as the regulations order suits (diamonds lowest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Suit {
    /// Ouros, ♦ — the lowest suit.
    Diamonds = 0,
    /// Paus, ♣.
    Clubs = 1,
    /// Copas, ♥.
    Hearts = 2,
    /// Espadas, ♠ — the highest suit.
    Spades = 3,
}

impl Suit {
    /// All suits from the lowest to the highest.
    pub const ALL: [Suit; 4] = [Suit::Diamonds, Suit::Clubs, Suit::Hearts, Suit::Spades];

    /// The suit with index `i` (0 = diamonds … 3 = spades).
    pub const fn from_index(i: u8) -> Suit {
        match i & 3 {
            0 => Suit::Diamonds,
            1 => Suit::Clubs,
            2 => Suit::Hearts,
            _ => Suit::Spades,
        }
    }

    /// The one-letter code used in card codes: `S`, `H`, `D`, `C`.
    pub const fn letter(self) -> char {
        match self {
            Suit::Diamonds => 'D',
            Suit::Clubs => 'C',
            Suit::Hearts => 'H',
            Suit::Spades => 'S',
        }
    }

    /// The suit symbol, for people.
    pub const fn symbol(self) -> char {
        match self {
            Suit::Diamonds => '♦',
            Suit::Clubs => '♣',
            Suit::Hearts => '♥',
            Suit::Spades => '♠',
        }
    }

    fn from_letter(c: char) -> Option<Suit> {
        match c.to_ascii_uppercase() {
            'D' | '♦' => Some(Suit::Diamonds),
            'C' | '♣' => Some(Suit::Clubs),
            'H' | '♥' => Some(Suit::Hearts),
            'S' | '♠' => Some(Suit::Spades),
            _ => None,
        }
    }
}

/// A card rank, in poker order (two lowest, ace highest). Games that order
/// ranks differently (ace-low straights, San Gong's K > … > A) map from this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum Rank {
    Two = 0,
    Three,
    Four,
    Five,
    Six,
    Seven,
    Eight,
    Nine,
    Ten,
    Jack,
    Queen,
    King,
    Ace,
}

impl Rank {
    /// All ranks from two to ace.
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    /// The rank with index `i` (0 = two … 12 = ace).
    pub const fn from_index(i: u8) -> Rank {
        // A `static` (not the `const` ALL) so that runtime indexing reads one
        // table instead of materialising the array at every call.
        static RANKS: [Rank; 13] = Rank::ALL;
        RANKS[i as usize % 13]
    }

    /// The rank's index (0 = two … 12 = ace).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The code used in card codes: `A`, `2` … `10`, `J`, `Q`, `K`.
    pub const fn code(self) -> &'static str {
        ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"][self as usize]
    }

    fn from_code(s: &str) -> Option<Rank> {
        let up = s.to_ascii_uppercase();
        let rank = match up.as_str() {
            "A" | "1" => Rank::Ace,
            "K" => Rank::King,
            "Q" => Rank::Queen,
            "J" => Rank::Jack,
            "10" | "T" => Rank::Ten,
            _ => {
                let n: u8 = up.parse().ok()?;
                if (2..=9).contains(&n) {
                    Rank::from_index(n - 2)
                } else {
                    return None;
                }
            }
        };
        Some(rank)
    }
}

/// One playing card of a 52-card deck.
///
/// Stored as `rank * 4 + suit`, so that `Card`s order by rank first and then by
/// the regulations' suit order; this index (0..52) is also the card's bit in a
/// [`CardSet`]. Serialised as its code (`"AS"`, `"10H"`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(u8);

impl Card {
    /// The card of that rank and suit.
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card(rank as u8 * 4 + suit as u8)
    }

    /// The card with index `i` (0..52), or `None` past the deck.
    pub const fn from_index(i: u8) -> Option<Card> {
        if i < 52 {
            Some(Card(i))
        } else {
            None
        }
    }

    /// The card's index 0..52 (`rank * 4 + suit`).
    #[inline]
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The card's rank.
    #[inline]
    pub const fn rank(self) -> Rank {
        Rank::from_index(self.0 >> 2)
    }

    /// The card's suit.
    #[inline]
    pub const fn suit(self) -> Suit {
        Suit::from_index(self.0 & 3)
    }

    /// Every card of one deck, two of diamonds first, ace of spades last.
    pub fn all() -> impl Iterator<Item = Card> {
        (0..52).map(Card)
    }

    /// The card code: rank (`A`, `2`–`10`, `J`, `Q`, `K`) then suit (`S`, `H`, `D`, `C`).
    pub fn code(self) -> String {
        format!("{}{}", self.rank().code(), self.suit().letter())
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank().code(), self.suit().letter())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Card {
    type Err = RulesError;

    /// Parses `AS`, `10h`, `Td`, `Q♠`.
    fn from_str(s: &str) -> Result<Card, RulesError> {
        let s = s.trim();
        let bad = || RulesError::BadCardCode(s.to_string());
        let last = s.chars().last().ok_or_else(bad)?;
        let suit = Suit::from_letter(last).ok_or_else(bad)?;
        let rank = Rank::from_code(&s[..s.len() - last.len_utf8()]).ok_or_else(bad)?;
        Ok(Card::new(rank, suit))
    }
}

impl Serialize for Card {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Card, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Parses a whitespace- or comma-separated list of card codes (`"AS KH 10D"`).
pub fn parse_cards(s: &str) -> Result<Vec<Card>, RulesError> {
    s.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()).map(str::parse).collect()
}

/// A set of distinct cards of one deck, as a 52-bit mask.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CardSet(u64);

impl CardSet {
    /// The empty set.
    pub const EMPTY: CardSet = CardSet(0);
    /// All 52 cards.
    pub const FULL: CardSet = CardSet((1u64 << 52) - 1);

    /// The set holding exactly these cards (duplicates collapse).
    pub fn of(cards: &[Card]) -> CardSet {
        CardSet(cards.iter().fold(0, |m, c| m | 1u64 << c.0))
    }

    /// The raw 52-bit mask (bit `card.index()`).
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Whether `card` is in the set.
    pub const fn contains(self, card: Card) -> bool {
        self.0 >> card.0 & 1 == 1
    }

    /// Adds `card`; returns `false` if it was already there.
    pub fn insert(&mut self, card: Card) -> bool {
        let had = self.contains(card);
        self.0 |= 1u64 << card.0;
        !had
    }

    /// Number of cards in the set.
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the two sets share a card.
    pub const fn intersects(self, other: CardSet) -> bool {
        self.0 & other.0 != 0
    }

    /// The cards of the set, lowest index first.
    pub fn iter(self) -> impl Iterator<Item = Card> {
        let mut m = self.0;
        std::iter::from_fn(move || {
            if m == 0 {
                return None;
            }
            let i = m.trailing_zeros() as u8;
            m &= m - 1;
            Some(Card(i))
        })
    }

    /// The cards not in this set.
    pub const fn complement(self) -> CardSet {
        CardSet(!self.0 & Self::FULL.0)
    }
}

/// The cards in a dealing shoe or shuffler: `decks` × 52 cards.
///
/// Single-deck games (fortune3cp, stud-2004, sangong-1996) use one deck;
/// qpoker-2004 Art. 1 allows "um ou mais baralhos", so identical cards can
/// legitimately appear there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shoe {
    cards: Vec<Card>,
    next: usize,
}

impl Shoe {
    /// An ordered (unshuffled) shoe of `decks` decks.
    pub fn new(decks: u8) -> Shoe {
        let cards = (0..decks).flat_map(|_| Card::all()).collect();
        Shoe { cards, next: 0 }
    }

    /// A shoe shuffled with `rng`.
    pub fn shuffled(decks: u8, rng: &mut crate::rng::Rng) -> Shoe {
        let mut shoe = Shoe::new(decks);
        rng.shuffle(&mut shoe.cards);
        shoe
    }

    /// A shoe that deals exactly these cards in this order (for scripted rounds).
    pub fn stacked(cards: Vec<Card>) -> Shoe {
        Shoe { cards, next: 0 }
    }

    /// Deals the next card, or `None` when the shoe is empty.
    pub fn deal(&mut self) -> Option<Card> {
        let card = self.cards.get(self.next).copied();
        self.next += usize::from(card.is_some());
        card
    }

    /// Cards not yet dealt.
    pub fn remaining(&self) -> usize {
        self.cards.len() - self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_for_every_card() {
        for card in Card::all() {
            let code = card.to_string();
            assert_eq!(code.parse::<Card>().unwrap(), card, "{code}");
            let json = serde_json::to_string(&card).unwrap();
            assert_eq!(serde_json::from_str::<Card>(&json).unwrap(), card);
        }
        assert_eq!("10H".parse::<Card>().unwrap(), Card::new(Rank::Ten, Suit::Hearts));
        assert_eq!("td".parse::<Card>().unwrap(), Card::new(Rank::Ten, Suit::Diamonds));
        assert_eq!("Q♠".parse::<Card>().unwrap(), Card::new(Rank::Queen, Suit::Spades));
        assert_eq!(Card::new(Rank::Ace, Suit::Spades).to_string(), "AS");
    }

    #[test]
    fn bad_codes_are_rejected_with_the_code() {
        for bad in ["", "S", "1", "11H", "AX", "ZZ", "0S"] {
            match bad.parse::<Card>() {
                Err(RulesError::BadCardCode(code)) => assert_eq!(code, bad),
                other => panic!("{bad:?} parsed as {other:?}"),
            }
        }
    }

    #[test]
    fn suit_order_is_spades_hearts_clubs_diamonds() {
        // stud-2004 Art. 4: "espadas, copas, paus e ouros", by decreasing value.
        assert!(Suit::Spades > Suit::Hearts);
        assert!(Suit::Hearts > Suit::Clubs);
        assert!(Suit::Clubs > Suit::Diamonds);
        assert!("2S".parse::<Card>().unwrap() < "3D".parse::<Card>().unwrap());
        assert!("KS".parse::<Card>().unwrap() > "KH".parse::<Card>().unwrap());
    }

    #[test]
    fn card_sets_and_shoes() {
        let cards = parse_cards("AS, KH 10D").unwrap();
        let set = CardSet::of(&cards);
        assert_eq!(set.len(), 3);
        assert_eq!(set.iter().collect::<Vec<_>>(), {
            let mut c = cards.clone();
            c.sort();
            c
        });
        assert_eq!(set.complement().len(), 49);
        let mut shoe = Shoe::new(2);
        assert_eq!(shoe.remaining(), 104);
        assert_eq!(shoe.deal(), Some(Card::new(Rank::Two, Suit::Diamonds)));
        assert_eq!(shoe.remaining(), 103);
        let mut rng = crate::rng::Rng::seeded(3);
        let mut a = Shoe::shuffled(1, &mut rng);
        let dealt: Vec<Card> = std::iter::from_fn(|| a.deal()).collect();
        assert_eq!(CardSet::of(&dealt), CardSet::FULL);
    }
}
