//! Scripted rounds: what happens at the table, in order, as data.
//!
//! [`plan_round`] deals a round exactly as the ruleset's dealing procedure says
//! ([`crate::rules::deal_plan`]), with bets, decisions, reveals and collection,
//! and applies a named irregular [`Scenario`] to it. The result is the round's
//! ground truth (cards, bets, expected settlement and expected flags with their
//! articles) and a list of [`Action`]s that the timeline turns into frames.
use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::rules::deal::{deal_plan, DealRequest, SanGongDeal};
use crate::rules::settle::{settle, Decision, HandRound, Observed, ProgressivePool, Round, Settlement, Wager};
use crate::rules::{
    BetKind, Card, Citation, Consequence, DealingMode, IrregularityKind, Position, RulesError, Ruleset, RulesetId,
    Seat, Shoe,
};

/// A named irregular (or clean) round script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scenario {
    /// A round dealt and settled by the book.
    Clean,
    /// Two hands served out of order in the first pass.
    WrongDealOrder,
    /// A hand with a bet is passed over once: it is served out of order and ends a card short.
    SkippedHand,
    /// One card too many to a hand (four in a three-card game).
    FourCardsToAHand,
    /// One card too few to the dealer (two in a three-card game).
    TwoCardsToDealer,
    /// One player card lands face up during the deal.
    PlayerCardExposed,
    /// Two player cards (of two hands) land face up during the deal.
    TwoPlayerCardsExposed,
    /// A dealer card (not one face up by design) lands face up during the deal.
    DealerCardExposed,
    /// A seat without a bet is dealt a hand.
    CardsToHandWithoutBet,
    /// The same card appears twice in a single-deck game.
    DuplicateCard,
    /// A card of a hand is replaced by another before the reveal.
    CardSwapped,
    /// A card is taken from a hand before settlement.
    CardRemoved,
    /// The shuffler fails mid-deal: the partial deal is collected and the round redealt.
    ShufflerFailure,
}

impl Scenario {
    /// Every scenario, clean first.
    pub const ALL: [Scenario; 13] = [
        Scenario::Clean,
        Scenario::WrongDealOrder,
        Scenario::SkippedHand,
        Scenario::FourCardsToAHand,
        Scenario::TwoCardsToDealer,
        Scenario::PlayerCardExposed,
        Scenario::TwoPlayerCardsExposed,
        Scenario::DealerCardExposed,
        Scenario::CardsToHandWithoutBet,
        Scenario::DuplicateCard,
        Scenario::CardSwapped,
        Scenario::CardRemoved,
        Scenario::ShufflerFailure,
    ];

    /// The scenario's name (snake case), as on the command line.
    pub fn name(self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    }

    /// Parses a scenario name.
    pub fn parse(s: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|sc| sc.name() == s)
    }

    /// The irregularities the scenario produces (empty for a clean round).
    pub fn irregularities(self) -> &'static [IrregularityKind] {
        use IrregularityKind as K;
        match self {
            Scenario::Clean => &[],
            Scenario::WrongDealOrder => &[K::WrongDealOrder],
            Scenario::SkippedHand => &[K::WrongDealOrder, K::WrongCardCount],
            Scenario::FourCardsToAHand | Scenario::TwoCardsToDealer => &[K::WrongCardCount],
            Scenario::PlayerCardExposed => &[K::OnePlayerCardExposed],
            Scenario::TwoPlayerCardsExposed => &[K::SeveralPlayerCardsExposed],
            Scenario::DealerCardExposed => &[K::DealerCardExposed],
            Scenario::CardsToHandWithoutBet => &[K::CardsToHandWithoutBet],
            Scenario::DuplicateCard => &[K::DuplicateCard],
            Scenario::CardSwapped => &[K::CardSwapped],
            Scenario::CardRemoved => &[K::CardRemoved],
            Scenario::ShufflerFailure => &[K::ShufflerFailure],
        }
    }

    /// Whether the scenario can happen under `rs` (and the regulation has a rule for it).
    pub fn applies_to(self, rs: &Ruleset) -> bool {
        let has_rules = self.irregularities().iter().all(|&k| rs.irregularity(k).is_some());
        let possible = match self {
            Scenario::DuplicateCard => rs.decks == 1,
            Scenario::ShufflerFailure => rs.dealing.iter().any(|p| p.mode == DealingMode::Shuffler),
            _ => true,
        };
        has_rules && possible
    }
}

/// An irregularity the round must be flagged for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpectedFlag {
    /// What.
    pub kind: IrregularityKind,
    /// The hand concerned (none for the dealer or the whole round).
    pub seat: Option<Seat>,
    /// What the regulation says happens.
    pub consequence: Consequence,
    /// The article.
    pub citation: Citation,
    /// The first action index at which a camera can see it (see [`RoundPlan::actions`]).
    pub visible_from_action: usize,
}

/// One physical card on the table during a round (a round may use two copies of
/// a card in the duplicate scenario, hence the id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PhysicalCard {
    /// Unique within the session.
    pub id: u32,
    /// Its face.
    pub card: Card,
}

/// Something that happens at the table, in order. Durations are in frames.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "action")]
pub enum Action {
    /// Chips appear in a bet spot.
    Bet {
        /// The seat.
        seat: Seat,
        /// The spot.
        bet: BetKind,
    },
    /// Cards travel from the shoe to a position (a packet from a shuffler travels together).
    Deal {
        /// The cards.
        cards: Vec<PhysicalCard>,
        /// Where.
        to: Position,
        /// Face up on arrival, per card.
        face_up: Vec<bool>,
    },
    /// A card is turned over where it lies.
    Flip {
        /// The card.
        id: u32,
        /// Face up afterwards.
        face_up: bool,
    },
    /// A player lifts the corners of a hand to look at it (cards stay face down).
    Peek {
        /// The seat.
        seat: Seat,
    },
    /// Cards are collected to the discard rack.
    Collect {
        /// The cards.
        ids: Vec<u32>,
    },
    /// An exposed dealer card is left out of the hand, face up and in view, at the discard
    /// rack (fortune3cp-2008 Art. 11(2); stud-2004 Art. 11(2) with the `burn` option).
    SetAside {
        /// The card.
        id: u32,
    },
    /// A card leaves the table (off the player's edge).
    Remove {
        /// The card.
        id: u32,
    },
    /// A card not dealt from the shoe is put into a hand (a swap).
    Introduce {
        /// The card.
        card: PhysicalCard,
        /// Where.
        to: Position,
    },
    /// Nothing moves.
    Wait,
}

/// An action with its duration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// What happens.
    #[serde(flatten)]
    pub action: Action,
    /// How many frames it takes.
    pub frames: u32,
}

/// A planned round: ground truth and the actions that show it.
#[derive(Debug, Clone, Serialize)]
pub struct RoundPlan {
    /// The ruleset.
    pub ruleset: RulesetId,
    /// The scenario.
    pub scenario: Scenario,
    /// Shoe or shuffler.
    pub dealing: DealingMode,
    /// San Gong: banker's place and dice total.
    pub sangong: Option<SanGongDeal>,
    /// The round as it should be settled (hands, bets, decisions, observed irregularities).
    pub round: Round,
    /// Its settlement by the rules engine.
    pub settlement: Settlement,
    /// The flags a verifier must raise.
    pub expected_flags: Vec<ExpectedFlag>,
    /// Everything that happens, in order.
    pub actions: Vec<Step>,
}

/// Frames per second of simulated video.
pub const FPS: u32 = 30;
const DEAL_FRAMES: u32 = 9;
const FLIP_FRAMES: u32 = 8;
const SET_ASIDE_FRAMES: u32 = 12;

struct Planner<'a> {
    rng: &'a mut Rng,
    next_id: u32,
    actions: Vec<Step>,
}

impl Planner<'_> {
    fn push(&mut self, action: Action, frames: u32) -> usize {
        self.actions.push(Step { action, frames });
        self.actions.len() - 1
    }

    fn physical(&mut self, card: Card) -> PhysicalCard {
        self.next_id += 1;
        PhysicalCard { id: self.next_id, card }
    }

    fn deal(&mut self, cards: Vec<Card>, to: Position, face_up: Vec<bool>) -> (usize, Vec<PhysicalCard>) {
        let cards: Vec<PhysicalCard> = cards.into_iter().map(|c| self.physical(c)).collect();
        let jitter = self.rng.below(4);
        let i = self.push(Action::Deal { cards: cards.clone(), to, face_up }, DEAL_FRAMES + jitter);
        (i, cards)
    }
}

/// The first action after which card `id` lies face up: dealt face up or turned up.
fn first_face_up(actions: &[Step], id: u32) -> Option<usize> {
    actions.iter().position(|st| match &st.action {
        Action::Deal { cards, face_up, .. } => cards.iter().zip(face_up).any(|(c, up)| c.id == id && *up),
        Action::Flip { id: f, face_up } => *f == id && *face_up,
        _ => false,
    })
}

/// Plans one round of `rs` with `scenario`, drawing everything random from `rng`.
/// `first_card_id` keeps card ids unique across a session; the plan's ids are above it.
pub fn plan_round(
    rs: &Ruleset,
    scenario: Scenario,
    rng: &mut Rng,
    first_card_id: u32,
) -> Result<RoundPlan, RulesError> {
    use IrregularityKind as K;
    if !scenario.applies_to(rs) {
        return Err(RulesError::BadDeal(format!("scenario {} does not apply to {}", scenario.name(), rs.id)));
    }
    let mut p = Planner { rng, next_id: first_card_id, actions: Vec::new() };
    let mode = if scenario == Scenario::ShufflerFailure {
        DealingMode::Shuffler
    } else {
        rs.dealing[p.rng.below(rs.dealing.len() as u32) as usize].mode
    };
    let sangong_game = rs.kind == crate::rules::ruleset::GameKind::SanGong;
    let max_seat = if sangong_game { 8 } else { rs.player_hands.1 };

    // Who bets. Keep at least two seats with bets and (for the no-bet scenario) one without.
    let (seats, sangong) = if sangong_game {
        let banker = Seat(1 + p.rng.below(8) as u8);
        let dice_total = (0..4).map(|_| 1 + p.rng.below(6) as u8).sum();
        ((1..=8).map(Seat).filter(|&s| s != banker).collect::<Vec<_>>(), Some(SanGongDeal { banker, dice_total }))
    } else {
        let mut seats: Vec<Seat> = (1..=max_seat).filter(|_| p.rng.below(4) > 0).map(Seat).collect();
        while seats.len() < 2 {
            let s = Seat(1 + p.rng.below(max_seat as u32) as u8);
            if !seats.contains(&s) {
                seats.push(s);
            }
        }
        if scenario == Scenario::CardsToHandWithoutBet && seats.len() == max_seat as usize {
            let drop = p.rng.below(seats.len() as u32) as usize;
            seats.remove(drop);
        }
        seats.sort();
        (seats, None)
    };
    let progressive_present = !rs.progressive.is_empty() && p.rng.below(2) == 0;

    // Bets (the camera sees chips; stakes are what the backend would tell).
    let mut wagers: Vec<(Seat, Vec<Wager>)> = Vec::new();
    for &seat in &seats {
        let stake = 100 * (1 + p.rng.below(5) as i64);
        let mut w = Vec::new();
        for (bet, _) in &rs.bet_spots {
            let wanted = match bet {
                BetKind::Ante | BetKind::Bet => true,
                BetKind::Play | BetKind::Raise => false,
                BetKind::Progressive => progressive_present && (seat == seats[0] || p.rng.below(2) == 0),
                _ => p.rng.below(2) == 0,
            };
            if wanted {
                w.push(Wager { bet: *bet, stake: Some(if *bet == BetKind::Progressive { 100 } else { stake }) });
            }
        }
        for wg in &w {
            p.push(Action::Bet { seat, bet: wg.bet }, 1);
        }
        wagers.push((seat, w));
    }
    p.push(Action::Wait, 6);

    // The prescribed deal.
    let mut shoe = Shoe::shuffled(rs.decks, p.rng);
    let mut req = DealRequest {
        mode,
        seats_with_bets: seats.clone(),
        progressive_present,
        shuffler_gives_three_for_community: false,
        sangong,
    };
    if scenario == Scenario::ShufflerFailure {
        // Art. 17(2) / 11(4) / 11(5): the machine stops mid-deal; the partial deal
        // is collected and the cards reshuffled before the real deal.
        let plan = deal_plan(rs, &req)?;
        let mut partial = Vec::new();
        for d in plan.iter().take(2) {
            let cards: Vec<Card> = (0..d.cards).map(|_| shoe.deal().expect("a fresh shoe has enough cards")).collect();
            let (_, phys) = p.deal(cards, d.to, vec![false; d.cards as usize]);
            partial.extend(phys.iter().map(|c| c.id));
        }
        p.push(Action::Wait, 10);
        p.push(Action::Collect { ids: partial }, 12);
        shoe = Shoe::shuffled(rs.decks, p.rng);
    }
    let mut plan = deal_plan(rs, &req)?;
    // Scenario edits to the sequence of deliveries.
    let mut no_bet_seat = None;
    let mut skipped_seat = None;
    match scenario {
        Scenario::CardsToHandWithoutBet => {
            let free: Vec<Seat> = (1..=max_seat).map(Seat).filter(|s| !seats.contains(s)).collect();
            let s = free[p.rng.below(free.len() as u32) as usize];
            no_bet_seat = Some(s);
            let mut with = seats.clone();
            with.push(s);
            req.seats_with_bets = with;
            plan = deal_plan(rs, &req)?;
        }
        Scenario::WrongDealOrder => {
            // Swap the first two consecutive deliveries to different seats.
            if let Some(i) = (0..plan.len() - 1)
                .find(|&i| matches!((plan[i].to, plan[i + 1].to), (Position::Seat(a), Position::Seat(b)) if a != b))
            {
                plan.swap(i, i + 1);
            }
        }
        Scenario::SkippedHand => {
            // The first seat's first delivery is skipped and made up at the end of the deal.
            let first = plan.iter().position(|d| matches!(d.to, Position::Seat(_))).unwrap_or(0);
            let d = plan.remove(first);
            if let Position::Seat(s) = d.to {
                skipped_seat = Some(s);
            }
            // Made up only partly: the hand ends one card short when dealt one at a time.
            if d.cards > 1 {
                let mut short = d;
                short.cards -= 1;
                plan.push(short);
            }
        }
        Scenario::FourCardsToAHand => {
            let extra = *plan
                .iter()
                .find(|d| matches!(d.to, Position::Seat(s) if seats.contains(&s)))
                .expect("a seat with a bet is dealt");
            plan.push(crate::rules::Delivery { cards: 1, face_up: 0, ..extra });
        }
        Scenario::TwoCardsToDealer => {
            let dealer_pos = sangong.map_or(Position::Dealer, |g| Position::Seat(g.banker));
            if let Some(i) = plan.iter().rposition(|d| d.to == dealer_pos) {
                if plan[i].cards > 1 {
                    plan[i].cards -= 1;
                    plan[i].face_up = plan[i].face_up.min(plan[i].cards);
                } else {
                    plan.remove(i);
                }
            }
        }
        _ => {}
    }

    // Deal it, recording what each position gets.
    let mut held: std::collections::BTreeMap<Position, Vec<PhysicalCard>> = Default::default();
    // Which deliveries expose a player card: one per hand, distinct hands.
    let exposures_wanted = match scenario {
        Scenario::PlayerCardExposed => 1,
        Scenario::TwoPlayerCardsExposed => 2,
        _ => 0,
    };
    let mut expose_at: Vec<usize> = Vec::new();
    let mut exposed_seats: Vec<Seat> = Vec::new();
    for (n, d) in plan.iter().enumerate() {
        if let Position::Seat(s) = d.to {
            if expose_at.len() < exposures_wanted && !exposed_seats.contains(&s) && seats.contains(&s) {
                expose_at.push(n);
                exposed_seats.push(s);
            }
        }
    }
    let mut dealer_exposed_done = scenario != Scenario::DealerCardExposed;
    // Where the regulation has the exposed dealer card left out (fortune3cp-2008 Art. 11(2): "a
    // carta é deixada de fora, à vista, e todas as restantes cartas são distribuídas de face para
    // baixo"), the dealer sets it aside face up and the hand gets the next card, face down.
    let sets_aside = rs.exposed_dealer_card() == Some(Consequence::DealerCardSetAside);
    let mut set_aside: Vec<u32> = Vec::new();
    // stud-2004 Art. 11(2), default reading (docs/rules.md C-3): dealt from the shoe, the exposed
    // card stays face up as the dealer's up-card, and the dealer's last card, normally face up
    // (Art. 7), comes face down. (From a stud shuffler the packet lands whole, its top card
    // shown: the exposed card is turned face down again.) fortune3cp-2008 with
    // `exposed_dealer_card = keep_in_hand` (B-3): it stays in the hand, face up.
    let keeps_up = (mode == DealingMode::Shoe || rs.face_up_by_design == crate::rules::ruleset::FaceUpByDesign::None)
        && rs.exposed_dealer_card() == Some(Consequence::DealerCardStaysUp);
    let mut kept_up = false;
    let mut duplicate_source: Option<Card> = None;
    // The two physical copies of the duplicated card (ids), for when both have shown their face.
    let mut duplicate_ids: Vec<u32> = Vec::new();
    let total_deliveries = plan.len();
    let mut first_visible: std::collections::BTreeMap<IrregularityKind, (usize, Option<Seat>)> = Default::default();
    for (n, d) in plan.iter().enumerate() {
        let mut cards: Vec<Card> = (0..d.cards).map(|_| shoe.deal().expect("enough cards in the shoe")).collect();
        if scenario == Scenario::DuplicateCard && n + 1 == total_deliveries {
            if let Some(dup) = duplicate_source {
                cards[0] = dup;
            }
        }
        if duplicate_source.is_none() {
            duplicate_source = Some(cards[0]);
        }
        let is_dealer = d.to == Position::Dealer || sangong.is_some_and(|g| d.to == Position::Seat(g.banker));
        let designed_up = if kept_up && is_dealer { 0 } else { d.face_up };
        let mut face_up: Vec<bool> = (0..d.cards).map(|i| designed_up > 0 && i + designed_up >= d.cards).collect();
        if expose_at.contains(&n) {
            face_up[0] = true;
        }
        if !dealer_exposed_done && is_dealer && !face_up[0] {
            face_up[0] = true;
            dealer_exposed_done = true;
        }
        let (action_index, mut phys) = p.deal(cards, d.to, face_up.clone());
        // Cards to a hand without a bet: the first card landing there shows it.
        if let (Some(s), Position::Seat(to)) = (no_bet_seat, d.to) {
            if s == to {
                first_visible.entry(K::CardsToHandWithoutBet).or_insert((action_index, Some(s)));
            }
        }
        // An exposed card is seen, then turned face down again by the dealer.
        for (k, up) in face_up.iter().enumerate() {
            let by_design = k as u8 + d.face_up >= d.cards && d.face_up > 0;
            if *up && !by_design {
                let kind = match (d.to, scenario) {
                    _ if is_dealer => K::DealerCardExposed,
                    (_, Scenario::TwoPlayerCardsExposed) => K::SeveralPlayerCardsExposed,
                    _ => K::OnePlayerCardExposed,
                };
                let seat = if let Position::Seat(s) = d.to { Some(s) } else { None };
                let entry = first_visible.entry(kind).or_insert((action_index, seat));
                if kind == K::SeveralPlayerCardsExposed {
                    // Visible once the second card shows.
                    entry.0 = action_index;
                    entry.1 = None;
                }
                let id = phys[k].id;
                p.push(Action::Wait, 8);
                if kind == K::DealerCardExposed && sets_aside {
                    p.push(Action::SetAside { id }, SET_ASIDE_FRAMES);
                    set_aside.push(id);
                    let next = shoe.deal().expect("enough cards in the shoe");
                    let (_, replacement) = p.deal(vec![next], d.to, vec![false]);
                    phys[k] = replacement[0];
                } else if kind == K::DealerCardExposed && keeps_up {
                    kept_up = true;
                } else {
                    p.push(Action::Flip { id, face_up: false }, FLIP_FRAMES);
                }
            }
        }
        if scenario == Scenario::DuplicateCard && (n == 0 || n + 1 == total_deliveries) {
            duplicate_ids.push(phys[0].id);
        }
        if scenario == Scenario::DuplicateCard && n + 1 == total_deliveries {
            // Refined below, once the reveal is planned: a face-down copy shows nothing.
            first_visible
                .insert(K::DuplicateCard, (action_index, if let Position::Seat(s) = d.to { Some(s) } else { None }));
        }
        held.entry(d.to).or_default().extend(phys);
    }
    let deal_end = p.actions.len();
    if let Some(s) = no_bet_seat {
        first_visible.entry(K::CardsToHandWithoutBet).or_insert((deal_end - 1, Some(s)));
    }
    if let Some(s) = skipped_seat {
        first_visible.insert(K::WrongDealOrder, (first_action_of(&p.actions, 0), Some(s)));
        first_visible.insert(K::WrongCardCount, (deal_end - 1, Some(s)));
    }
    if scenario == Scenario::WrongDealOrder {
        first_visible.insert(K::WrongDealOrder, (first_action_of(&p.actions, 0), None));
    }
    if matches!(scenario, Scenario::FourCardsToAHand | Scenario::TwoCardsToDealer) {
        // The San Gong banker's hand is a place like the others, named by its
        // number (sangong-1996 Art. 3(1), docs/events.md); the dealer's is not.
        let seat = if scenario == Scenario::FourCardsToAHand {
            plan.last().and_then(|d| seat_of(d.to))
        } else {
            sangong.map(|g| g.banker)
        };
        first_visible.insert(K::WrongCardCount, (deal_end - 1, seat));
    }
    if scenario == Scenario::ShufflerFailure {
        // The machine stopping shows nothing; the partial deal taken back is what a camera (and
        // the surveillance room) sees. Before session 34 the truth said "from the first card
        // dealt", which charged every tracker the whole partial deal as latency.
        let taken_back = p.actions.iter().position(|s| matches!(s.action, Action::Collect { .. }));
        first_visible.insert(K::ShufflerFailure, (taken_back.unwrap_or(0), None));
    }
    p.push(Action::Wait, 10);

    // Players look at their cards and decide.
    let seat_cards = |held: &std::collections::BTreeMap<Position, Vec<PhysicalCard>>, s: Seat| -> Vec<PhysicalCard> {
        held.get(&Position::Seat(s)).cloned().unwrap_or_default()
    };
    for &seat in &seats {
        if !seat_cards(&held, seat).is_empty() {
            p.push(Action::Peek { seat }, 10);
        }
    }
    // Swap / removal happen while the hands lie face down.
    if matches!(scenario, Scenario::CardSwapped | Scenario::CardRemoved) {
        let seat = seats[p.rng.below(seats.len() as u32) as usize];
        let used: Vec<Card> = held.values().flatten().map(|c| c.card).collect();
        let hand = held.get_mut(&Position::Seat(seat)).expect("seat was dealt");
        let k = p.rng.below(hand.len() as u32) as usize;
        let victim = hand.remove(k);
        let i = p.push(Action::Remove { id: victim.id }, 12);
        if scenario == Scenario::CardSwapped {
            // A card from outside this round's deck order (e.g. a palmed card).
            let replacement =
                crate::rules::Card::all().find(|c| !used.contains(c) && *c != victim.card).expect("a free card");
            let pc = p.physical(replacement);
            p.push(Action::Introduce { card: pc, to: Position::Seat(seat) }, 12);
            hand.insert(k, pc);
            first_visible.insert(K::CardSwapped, (i, Some(seat)));
        } else {
            first_visible.insert(K::CardRemoved, (i, Some(seat)));
        }
    }

    let mut decisions = Vec::new();
    for &seat in &seats {
        let cards: Vec<Card> = seat_cards(&held, seat).iter().map(|c| c.card).collect();
        let plays = cards.len() == rs.cards_per_hand as usize && player_continues(rs, &cards, p.rng);
        decisions.push((seat, if plays { Decision::Played } else { Decision::Folded }));
    }
    for (seat, decision) in &decisions {
        let (seat, decision) = (*seat, *decision);
        let w = &mut wagers.iter_mut().find(|(s, _)| *s == seat).expect("seat has wagers").1;
        match (decision, rs.kind) {
            (Decision::Played, crate::rules::ruleset::GameKind::FortuneThreeCard) => {
                let stake = w.iter().find(|x| x.bet == BetKind::Ante).and_then(|x| x.stake);
                w.push(Wager { bet: BetKind::Play, stake });
                p.push(Action::Bet { seat, bet: BetKind::Play }, 4);
            }
            (Decision::Played, crate::rules::ruleset::GameKind::Stud) => {
                let stake = w.iter().find(|x| x.bet == BetKind::Ante).and_then(|x| x.stake.map(|s| 2 * s));
                w.push(Wager { bet: BetKind::Raise, stake });
                p.push(Action::Bet { seat, bet: BetKind::Raise }, 4);
            }
            (Decision::Folded, _) => {
                // fortune3cp-2025 Art. 12(3): collected at once unless side bets keep the cards.
                let keeps =
                    w.iter().any(|x| matches!(x.bet, BetKind::PairPlus | BetKind::SixCardBonus | BetKind::Progressive));
                if !keeps {
                    let ids: Vec<u32> = seat_cards(&held, seat).iter().map(|c| c.id).collect();
                    p.push(Action::Collect { ids }, 10);
                }
            }
            _ => {}
        }
    }

    // Reveal: dealer's cards, then each hand from the dealer's right, then community.
    let dealer_pos = match sangong {
        Some(sg) => Position::Seat(sg.banker),
        None => Position::Dealer,
    };
    let mut reveal_order: Vec<Position> = vec![dealer_pos];
    let mut seat_order: Vec<Seat> =
        held.keys().filter_map(|&pos| seat_of(pos)).filter(|&s| Some(s) != sangong.map(|g| g.banker)).collect();
    seat_order.sort_by(|a, b| b.cmp(a));
    reveal_order.extend(seat_order.iter().map(|&s| Position::Seat(s)));
    if progressive_present {
        reveal_order.push(Position::Community);
    }
    let folded_collected =
        |seat: Seat, actions: &[Step], held: &std::collections::BTreeMap<Position, Vec<PhysicalCard>>| {
            let ids: Vec<u32> = seat_cards(held, seat).iter().map(|c| c.id).collect();
            actions.iter().any(|st| matches!(&st.action, Action::Collect { ids: c } if !ids.is_empty() && c == &ids))
        };
    let mut face: std::collections::BTreeMap<u32, bool> = Default::default();
    for st in &p.actions {
        match &st.action {
            Action::Deal { cards, face_up, .. } => {
                for (c, up) in cards.iter().zip(face_up) {
                    face.insert(c.id, *up);
                }
            }
            Action::Flip { id, face_up } => {
                face.insert(*id, *face_up);
            }
            _ => {}
        }
    }
    for pos in reveal_order {
        if let Position::Seat(s) = pos {
            if folded_collected(s, &p.actions, &held) {
                continue;
            }
        }
        let ids: Vec<u32> = held.get(&pos).map(|v| v.iter().map(|c| c.id).collect()).unwrap_or_default();
        for id in ids {
            if face.get(&id) != Some(&true) {
                p.push(Action::Flip { id, face_up: true }, FLIP_FRAMES);
            }
        }
        p.push(Action::Wait, 6);
    }
    p.push(Action::Wait, 20);
    let on_table: Vec<u32> = held
        .values()
        .flatten()
        .map(|c| c.id)
        .chain(set_aside.iter().copied())
        .filter(|id| !p.actions.iter().any(|st| matches!(&st.action, Action::Collect { ids } if ids.contains(id))))
        .collect();
    p.push(Action::Collect { ids: on_table }, 16);
    p.push(Action::Wait, 8);
    // A duplicate is visible only once both copies have shown their face (a camera reads no
    // face-down card); until then no one could flag it.
    if let Some(v) = first_visible.get_mut(&K::DuplicateCard) {
        let shown: Option<Vec<usize>> = duplicate_ids.iter().map(|&id| first_face_up(&p.actions, id)).collect();
        if let Some(at) = shown.and_then(|s| s.into_iter().max()) {
            v.0 = v.0.max(at);
        }
    }

    // The round as the rules engine settles it.
    let observed: Vec<Observed> = scenario
        .irregularities()
        .iter()
        .map(|&kind| Observed { kind, seat: first_visible.get(&kind).and_then(|v| v.1) })
        .collect();
    let dealer_cards: Vec<Card> = held.get(&dealer_pos).map(|v| v.iter().map(|c| c.card).collect()).unwrap_or_default();
    let hands: Vec<HandRound> = wagers
        .iter()
        .map(|(seat, w)| HandRound {
            seat: *seat,
            cards: seat_cards(&held, *seat).iter().map(|c| c.card).collect(),
            wagers: w.clone(),
            decision: decisions.iter().find(|d| d.0 == *seat).map(|d| d.1).unwrap_or_default(),
        })
        .chain(no_bet_seat.map(|s| HandRound {
            seat: s,
            cards: seat_cards(&held, s).iter().map(|c| c.card).collect(),
            wagers: vec![],
            decision: Decision::Played,
        }))
        .collect();
    let round = Round {
        hands,
        dealer: dealer_cards,
        community: held.get(&Position::Community).map(|v| v.iter().map(|c| c.card).collect()).unwrap_or_default(),
        irregularities: observed.clone(),
        progressive_pool: table_jackpot(rs),
        max_payout: None,
        sangong_bank: None,
    };
    let settlement = settle_for_truth(rs, &round)?;
    let expected_flags = observed
        .iter()
        .map(|o| {
            let rule = rs.irregularity(o.kind).expect("scenario applies, so the rule exists");
            ExpectedFlag {
                kind: o.kind,
                seat: o.seat,
                consequence: rule.consequence,
                citation: rule.citation,
                visible_from_action: first_visible.get(&o.kind).map(|v| v.0).unwrap_or(0),
            }
        })
        .collect();
    Ok(RoundPlan {
        ruleset: rs.id,
        scenario,
        dealing: mode,
        sangong,
        round,
        settlement,
        expected_flags,
        actions: p.actions,
    })
}

/// Settles for the ground truth: irregular rounds whose cards cannot be settled
/// (a short hand, a duplicate) are reported as void by the article that applies.
/// The simulated table's Progressive jackpot, the same every round (as if the house topped it
/// up): the amounts the regulation leaves to the table (docs/rules.md A-11), which its backend
/// tells in a `jackpot` message. `None` for a ruleset without a Progressive.
pub fn table_jackpot(rs: &Ruleset) -> Option<ProgressivePool> {
    use crate::rules::eval5::Category5 as C;
    (!rs.progressive.is_empty()).then(|| ProgressivePool {
        pool: 2_000_000,
        reset_to: 500_000,
        fixed: [
            (C::RoyalFlush, 1_000_000),
            (C::StraightFlush, 100_000),
            (C::Quads, 50_000),
            (C::FullHouse, 15_000),
            (C::Flush, 5_000),
        ]
        .into_iter()
        .collect(),
    })
}

fn settle_for_truth(rs: &Ruleset, round: &Round) -> Result<Settlement, RulesError> {
    match settle(rs, round) {
        Ok(s) => Ok(s),
        Err(RulesError::BadRound(_)) if !round.irregularities.is_empty() => {
            // The irregularity decides: settle as if only it had been observed with
            // void consequence, using a copy whose hands are trimmed to legal sizes.
            let mut r = round.clone();
            let n = rs.cards_per_hand as usize;
            r.hands.retain(|h| h.cards.len() == n);
            let mut seen = crate::rules::CardSet::EMPTY;
            for h in &mut r.hands {
                if h.cards.iter().any(|&c| !seen.insert(c)) {
                    h.cards.clear();
                }
            }
            r.hands.retain(|h| h.cards.len() == n);
            settle(rs, &r)
        }
        Err(e) => Err(e),
    }
}

fn seat_of(p: Position) -> Option<Seat> {
    match p {
        Position::Seat(s) => Some(s),
        _ => None,
    }
}

fn first_action_of(actions: &[Step], _from: usize) -> usize {
    actions.iter().position(|s| matches!(s.action, Action::Deal { .. })).unwrap_or(0)
}

/// A plausible player: continues with a decent hand, sometimes on a whim.
fn player_continues(rs: &Ruleset, cards: &[Card], rng: &mut Rng) -> bool {
    use crate::rules::eval3::Category3;
    use crate::rules::ruleset::GameKind;
    match rs.kind {
        GameKind::SanGong => true,
        GameKind::Stud => {
            let five: [Card; 5] = match cards.try_into() {
                Ok(f) => f,
                Err(_) => return false,
            };
            crate::rules::eval5::Evaluator5::get().eval(five).category() > crate::rules::eval5::Category5::HighCard
                || rng.below(4) == 0
        }
        _ => {
            let three: [Card; 3] = match cards.try_into() {
                Ok(t) => t,
                Err(_) => return false,
            };
            let r = rs.three_card_rules().eval(three);
            r.category() > Category3::HighCard || r.top_rank() >= crate::rules::Rank::Queen || rng.below(5) == 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_plans_for_every_ruleset_it_applies_to_with_its_flags() {
        for id in RulesetId::ALL {
            let rs = Ruleset::new(id);
            for sc in Scenario::ALL {
                if !sc.applies_to(&rs) {
                    continue;
                }
                for seed in 0..8 {
                    let mut rng = Rng::seeded(seed);
                    let plan = plan_round(&rs, sc, &mut rng, 0).unwrap_or_else(|e| panic!("{id} {}: {e}", sc.name()));
                    let kinds: Vec<IrregularityKind> = plan.expected_flags.iter().map(|f| f.kind).collect();
                    assert_eq!(kinds, sc.irregularities(), "{id} {}", sc.name());
                    for f in &plan.expected_flags {
                        assert_eq!(f.citation.ruleset, id);
                        assert!(f.visible_from_action < plan.actions.len());
                        if f.kind == IrregularityKind::DuplicateCard {
                            duplicate_shows_with_its_second_face(&plan, f.visible_from_action);
                        }
                        if f.kind == IrregularityKind::ShufflerFailure {
                            // shown by the partial deal taken back, after cards were dealt
                            let at = &plan.actions[..=f.visible_from_action];
                            assert!(matches!(at.last().map(|s| &s.action), Some(Action::Collect { .. })), "{id}");
                            assert!(at.iter().any(|s| matches!(s.action, Action::Deal { .. })), "{id}");
                        }
                    }
                }
            }
        }
    }

    /// A duplicate is visible from the action that shows the second copy's face (a face-down
    /// copy shows nothing), or from the last deal where a copy never shows.
    fn duplicate_shows_with_its_second_face(plan: &RoundPlan, at: usize) {
        let mut ids: std::collections::BTreeMap<Card, Vec<u32>> = Default::default();
        for st in &plan.actions {
            if let Action::Deal { cards, .. } = &st.action {
                for c in cards {
                    ids.entry(c.card).or_default().push(c.id);
                }
            }
        }
        let copies = ids.values().find(|v| v.len() == 2).expect("two copies of one card");
        let shown: Vec<Option<usize>> = copies.iter().map(|&id| first_face_up(&plan.actions, id)).collect();
        match (shown[0], shown[1]) {
            (Some(a), Some(b)) => assert_eq!(at, a.max(b), "{}", plan.ruleset),
            _ => assert!(matches!(plan.actions[at].action, Action::Deal { .. })),
        }
    }

    #[test]
    fn clean_rounds_deal_exactly_the_prescribed_cards_and_settle() {
        for id in RulesetId::ALL {
            let rs = Ruleset::new(id);
            for seed in 0..20 {
                let plan = plan_round(&rs, Scenario::Clean, &mut Rng::seeded(seed), 0).unwrap();
                assert!(plan.expected_flags.is_empty());
                let n = rs.cards_per_hand as usize;
                assert!(plan.round.hands.iter().all(|h| h.cards.len() == n), "{id} seed {seed}");
                assert_eq!(plan.round.dealer.len(), n);
                assert_eq!(plan.settlement, settle(&rs, &plan.round).unwrap());
            }
        }
    }

    /// What a camera would see in a plan's actions, independently of its flags.
    struct Seen {
        order: Vec<Position>,
        exposed_player_seats: Vec<Seat>,
        dealer_exposed: bool,
        duplicate: bool,
        swapped: bool,
        removed: bool,
        collected_before_main_deal: bool,
    }

    fn seen(rs: &Ruleset, plan: &RoundPlan) -> Seen {
        let mut order = Vec::new();
        let mut exposed_player_seats = Vec::new();
        let mut dealer_exposed = false;
        let mut where_: std::collections::BTreeMap<u32, Position> = Default::default();
        let mut faces: Vec<Card> = Vec::new();
        let mut swapped = false;
        let mut removed = false;
        let mut collected_before_main_deal = false;
        let mut dealt_any = false;
        for st in &plan.actions {
            match &st.action {
                Action::Deal { cards, to, face_up } => {
                    dealt_any = true;
                    order.push(*to);
                    for (i, (c, up)) in cards.iter().zip(face_up).enumerate() {
                        where_.insert(c.id, *to);
                        faces.push(c.card);
                        let by_design = rs.face_up_by_design != crate::rules::ruleset::FaceUpByDesign::None
                            && *to == Position::Dealer
                            && i + 1 == cards.len()
                            && order.iter().filter(|p| **p == Position::Dealer).count() * cards.len()
                                == rs.cards_per_hand as usize;
                        let banker = plan.sangong.map(|g| Position::Seat(g.banker));
                        if *up && !by_design {
                            match to {
                                _ if Some(*to) == banker => dealer_exposed = true,
                                Position::Seat(s) => exposed_player_seats.push(*s),
                                Position::Dealer => dealer_exposed = true,
                                _ => {}
                            }
                        }
                    }
                }
                Action::Collect { ids } => {
                    if dealt_any
                        && plan.round.hands.iter().all(|h| !h.cards.is_empty())
                        && where_.len() <= 2 * rs.cards_per_hand as usize
                    {
                        collected_before_main_deal = true;
                    }
                    for id in ids {
                        where_.insert(*id, Position::Discard);
                    }
                }
                Action::Remove { id } => {
                    where_.remove(id);
                    removed = true;
                }
                Action::Introduce { card, to } => {
                    where_.insert(card.id, *to);
                    swapped = true;
                }
                _ => {}
            }
        }
        let mut sorted = faces.clone();
        sorted.sort();
        let duplicate = sorted.windows(2).any(|w| w[0] == w[1]);
        Seen {
            order,
            exposed_player_seats,
            dealer_exposed,
            duplicate,
            swapped,
            removed: removed && !swapped,
            collected_before_main_deal,
        }
    }

    #[test]
    fn every_scenario_really_produces_the_irregularity_it_names() {
        use crate::rules::deal::{deal_plan, DealRequest};
        for id in RulesetId::ALL {
            let rs = Ruleset::new(id);
            for sc in Scenario::ALL {
                if !sc.applies_to(&rs) {
                    continue;
                }
                for seed in 0..6 {
                    let plan = plan_round(&rs, sc, &mut Rng::seeded(100 + seed), 0).unwrap();
                    let s = seen(&rs, &plan);
                    let n = rs.cards_per_hand as usize;
                    let bet_seats: Vec<Seat> =
                        plan.round.hands.iter().filter(|h| !h.wagers.is_empty()).map(|h| h.seat).collect();
                    let what = format!("{id} {} seed {seed}", sc.name());
                    // The sequence the regulation prescribes for these bets.
                    let prescribed: Vec<Position> = deal_plan(
                        &rs,
                        &DealRequest {
                            mode: plan.dealing,
                            seats_with_bets: bet_seats.clone(),
                            progressive_present: !plan.round.community.is_empty(),
                            shuffler_gives_three_for_community: false,
                            sangong: plan.sangong,
                        },
                    )
                    .unwrap()
                    .iter()
                    .map(|d| d.to)
                    .collect();
                    let hand_counts: Vec<usize> = plan.round.hands.iter().map(|h| h.cards.len()).collect();
                    match sc {
                        Scenario::Clean => {
                            assert_eq!(s.order, prescribed, "{what}");
                            assert!(s.exposed_player_seats.is_empty() && !s.dealer_exposed && !s.duplicate, "{what}");
                            assert!(hand_counts.iter().all(|&c| c == n), "{what}");
                        }
                        Scenario::WrongDealOrder => {
                            assert_ne!(s.order, prescribed, "{what}");
                            let (mut a, mut b) = (s.order.clone(), prescribed.clone());
                            a.sort();
                            b.sort();
                            assert_eq!(a, b, "{what}: same deliveries, other order");
                        }
                        Scenario::SkippedHand => {
                            assert_ne!(s.order, prescribed, "{what}");
                            let short = hand_counts.iter().any(|&c| c < n) || plan.round.dealer.len() < n;
                            assert!(short, "{what}: a hand ends short");
                        }
                        Scenario::FourCardsToAHand => {
                            assert!(hand_counts.contains(&(n + 1)), "{what}: {hand_counts:?}")
                        }
                        Scenario::TwoCardsToDealer => assert_eq!(plan.round.dealer.len(), n - 1, "{what}"),
                        Scenario::PlayerCardExposed => assert_eq!(s.exposed_player_seats.len(), 1, "{what}"),
                        Scenario::TwoPlayerCardsExposed => {
                            assert_eq!(s.exposed_player_seats.len(), 2, "{what}");
                            assert_ne!(s.exposed_player_seats[0], s.exposed_player_seats[1], "{what}");
                        }
                        Scenario::DealerCardExposed => assert!(s.dealer_exposed, "{what}"),
                        Scenario::CardsToHandWithoutBet => {
                            assert!(
                                plan.round.hands.iter().any(|h| h.wagers.is_empty() && h.cards.len() == n),
                                "{what}"
                            )
                        }
                        Scenario::DuplicateCard => assert!(s.duplicate, "{what}"),
                        Scenario::CardSwapped => assert!(s.swapped, "{what}"),
                        Scenario::CardRemoved => {
                            assert!(s.removed && hand_counts.contains(&(n - 1)), "{what}: {hand_counts:?}")
                        }
                        Scenario::ShufflerFailure => assert!(s.collected_before_main_deal, "{what}"),
                    }
                }
            }
        }
    }

    #[test]
    fn an_exposed_dealer_card_is_set_aside_and_replaced_where_the_ruleset_says_so() {
        use crate::rules::options::{F2008ExposedDealerCard, RulesetOptions, StudExposedDealerCard};
        let burn = RulesetOptions { stud_exposed_dealer_card: Some(StudExposedDealerCard::Burn), ..Default::default() };
        let keep =
            RulesetOptions { exposed_dealer_card: Some(F2008ExposedDealerCard::KeepInHand), ..Default::default() };
        let rulesets = [
            (Ruleset::new(RulesetId::Fortune3cp2008), true),
            (Ruleset::with_options(RulesetId::Fortune3cp2008, keep).unwrap(), false),
            (Ruleset::with_options(RulesetId::Stud2004, burn).unwrap(), true),
            (Ruleset::new(RulesetId::Stud2004), false),
            (Ruleset::new(RulesetId::Fortune3cp2025), false),
        ];
        let mut kept_up_checked = 0;
        for (rs, sets_aside) in rulesets {
            for seed in 0..8 {
                let plan = plan_round(&rs, Scenario::DealerCardExposed, &mut Rng::seeded(200 + seed), 0).unwrap();
                let what = format!("{} seed {seed}", rs.id);
                let dealt: Vec<PhysicalCard> = plan
                    .actions
                    .iter()
                    .filter_map(|st| match &st.action {
                        Action::Deal { cards, .. } => Some(cards.clone()),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                let aside: Vec<usize> = (0..plan.actions.len())
                    .filter(|&i| matches!(plan.actions[i].action, Action::SetAside { .. }))
                    .collect();
                assert_eq!(aside.len(), usize::from(sets_aside), "{what}");
                assert_eq!(plan.round.dealer.len(), rs.cards_per_hand as usize, "{what}: the dealer's hand");
                let kept = rs.exposed_dealer_card() == Some(Consequence::DealerCardStaysUp);
                if kept && (rs.id != RulesetId::Stud2004 || plan.dealing == DealingMode::Shoe) {
                    // C-3's default: the exposed card stays up, the dealer's later cards come down.
                    let deals: Vec<(usize, &Vec<PhysicalCard>, &Vec<bool>)> = (0..plan.actions.len())
                        .filter_map(|i| match &plan.actions[i].action {
                            Action::Deal { cards, to: Position::Dealer, face_up } => Some((i, cards, face_up)),
                            _ => None,
                        })
                        .collect();
                    let (at, exposed) = deals
                        .iter()
                        .find_map(|(i, cards, up)| up.first().filter(|u| **u).map(|_| (*i, cards[0].id)))
                        .expect("a dealer card dealt face up");
                    assert!(
                        deals.iter().filter(|(i, _, _)| *i > at).all(|(_, _, up)| up.iter().all(|u| !u)),
                        "{what}: the dealer's later cards face down"
                    );
                    assert!(
                        !plan
                            .actions
                            .iter()
                            .any(|st| matches!(st.action, Action::Flip { id, face_up: false } if id == exposed)),
                        "{what}: the exposed card stays face up"
                    );
                    kept_up_checked += 1;
                }
                let Some(&i) = aside.first() else { continue };
                let Action::SetAside { id } = plan.actions[i].action else { unreachable!() };
                let card = dealt.iter().find(|c| c.id == id).expect("dealt").card;
                assert!(!plan.round.dealer.contains(&card), "{what}: {card} set aside stays out of the hand");
                // The hand's next card comes at once, face down, and the card set aside goes with
                // the round's cards at the collection.
                assert!(
                    matches!(&plan.actions[i + 1].action, Action::Deal { cards, to: Position::Dealer, face_up }
                        if cards.len() == 1 && face_up == &[false] && plan.round.dealer.contains(&cards[0].card)),
                    "{what}: {:?}",
                    plan.actions[i + 1]
                );
                let last = plan.actions.iter().rev().find_map(|st| match &st.action {
                    Action::Collect { ids } => Some(ids.clone()),
                    _ => None,
                });
                assert!(last.is_some_and(|ids| ids.contains(&id)), "{what}");
            }
        }
        assert!(kept_up_checked > 0, "no stud round dealt from the shoe among the seeds");
    }

    #[test]
    fn plans_are_deterministic() {
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let a =
            serde_json::to_string(&plan_round(&rs, Scenario::CardSwapped, &mut Rng::seeded(5), 0).unwrap()).unwrap();
        let b =
            serde_json::to_string(&plan_round(&rs, Scenario::CardSwapped, &mut Rng::seeded(5), 0).unwrap()).unwrap();
        assert_eq!(a, b);
    }
}
