//! The timeline: turns a round's [`Action`]s into the state of every card,
//! chip stack and hand on the table at each frame, in table millimetres.
use std::collections::BTreeMap;
use std::f64::consts::PI;

use serde::Serialize;

use super::script::{Action, PhysicalCard, RoundPlan};
use crate::calib::{Point, TableGeometry, ZoneKind};
use crate::rng::Rng;
use crate::rules::{BetKind, Card, Position, Seat};

/// Where a zone is and which way it faces.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Anchor {
    center: Point,
    /// Direction of the zone's long axis (radians from table +x).
    angle: f64,
}

/// One card at one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardState {
    /// Physical card id (unique in the session).
    pub id: u32,
    /// Its face.
    pub card: Card,
    /// Face up (as seen from above).
    pub face_up: bool,
    /// Centre on the table, mm.
    pub center_mm: Point,
    /// Rotation of the card's width axis from table +x, radians.
    pub angle_rad: f64,
    /// Apparent width scale (1 flat; smaller while being turned over).
    pub width_scale: f64,
    /// Height above the felt, mm (lifted while turned or peeked at).
    pub height_mm: f64,
    /// Motion since the previous frame, mm.
    pub velocity_mm: [f64; 2],
    /// The position the card belongs to, once it has arrived there.
    pub at: Option<Position>,
}

/// A hand over the table (the dealer's or a player's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HandOverTable {
    /// Palm centre, mm.
    pub position_mm: Point,
    /// Direction the arm comes from, radians.
    pub angle_rad: f64,
    /// Whether it is the dealer's (else a player's).
    pub dealer: bool,
}

/// Everything visible at one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameState {
    /// Index of the action under way.
    pub action: usize,
    /// Cards in drawing order (lowest first).
    pub cards: Vec<CardState>,
    /// Bet spots holding chips.
    pub chips: Vec<(Seat, BetKind)>,
    /// Hands over the table.
    pub hands: Vec<HandOverTable>,
}

struct Live {
    pc: PhysicalCard,
    face_up: bool,
    center: Point,
    angle: f64,
    at: Option<Position>,
}

/// Where the next cards dealt to a position lie: the slot count per position, and places left in
/// a hand by a card set aside, which the card that replaces it takes.
struct Slots<'a> {
    next: &'a mut BTreeMap<Position, usize>,
    vacated: &'a mut BTreeMap<Position, Vec<(Point, f64)>>,
}

/// Builds the frames of a round on a table.
pub struct Timeline<'a> {
    geometry: &'a TableGeometry,
    anchors: BTreeMap<Position, Anchor>,
    shoe: Anchor,
    card_w: f64,
    cards_per_hand: usize,
}

impl<'a> Timeline<'a> {
    /// A timeline over `geometry`'s zones.
    pub fn new(geometry: &'a TableGeometry, cards_per_hand: u8) -> Timeline<'a> {
        let mut anchors = BTreeMap::new();
        let mut shoe = Anchor { center: Point::new(330.0, 80.0), angle: 0.0 };
        for z in &geometry.calibration.zones {
            let v = &z.polygon_mm.0;
            let angle = (v[1].y - v[0].y).atan2(v[1].x - v[0].x);
            let a = Anchor { center: z.polygon_mm.centroid(), angle };
            match z.kind {
                ZoneKind::Hand { seat } => {
                    anchors.insert(Position::Seat(Seat(seat)), a);
                }
                ZoneKind::DealerHand => {
                    anchors.insert(Position::Dealer, a);
                }
                ZoneKind::Community => {
                    anchors.insert(Position::Community, a);
                }
                ZoneKind::Discard => {
                    anchors.insert(Position::Discard, a);
                }
                ZoneKind::Shoe => shoe = a,
                ZoneKind::BetSpot { .. } => {}
            }
        }
        Timeline {
            geometry,
            anchors,
            shoe,
            card_w: geometry.calibration.card_size_mm[0],
            cards_per_hand: cards_per_hand as usize,
        }
    }

    /// The centre of a bet spot, if the table has it.
    pub fn bet_spot(&self, seat: Seat, bet: BetKind) -> Option<Point> {
        self.geometry
            .calibration
            .zones
            .iter()
            .find(|z| z.kind == ZoneKind::BetSpot { seat: seat.0, bet })
            .map(|z| z.polygon_mm.centroid())
    }

    fn slot(&self, pos: Position, k: usize, rng: &mut Rng) -> (Point, f64) {
        let a = self.anchors.get(&pos).copied().unwrap_or(self.shoe);
        let jitter = |rng: &mut Rng, s: f64| (rng.unit_f64() - 0.5) * 2.0 * s;
        if pos == Position::Discard {
            return (
                Point::new(a.center.x + jitter(rng, 6.0), a.center.y + jitter(rng, 6.0)),
                a.angle + jitter(rng, 0.05),
            );
        }
        let n = if pos == Position::Community { 2 } else { self.cards_per_hand };
        // Cards overlap as dealers place them: about half a card apart in a
        // three-card hand, a third apart in a five-card stud hand.
        let spacing = if n >= 5 { self.card_w * 0.55 } else { self.card_w * 0.62 };
        let offset = (k as f64 - (n as f64 - 1.0) / 2.0) * spacing;
        let (s, c) = a.angle.sin_cos();
        let p = Point::new(a.center.x + offset * c + jitter(rng, 3.0), a.center.y + offset * s + jitter(rng, 3.0));
        (p, a.angle + jitter(rng, 0.06))
    }

    /// All frames of a round, `rng` adding the small irregularities of real hands.
    pub fn frames(&self, plan: &RoundPlan, rng: &mut Rng) -> Vec<FrameState> {
        let mut live: Vec<Live> = Vec::new();
        let mut chips: Vec<(Seat, BetKind)> = Vec::new();
        let mut count_at: BTreeMap<Position, usize> = BTreeMap::new();
        // Places in a hand left by a card set aside, for the card that replaces it.
        let mut vacated: BTreeMap<Position, Vec<(Point, f64)>> = BTreeMap::new();
        let mut out = Vec::new();
        let off_table = |p: Point| {
            let r = p.x.hypot(p.y).max(1.0);
            Point::new(p.x / r * 1350.0, p.y / r * 1350.0)
        };
        for (ai, step) in plan.actions.iter().enumerate() {
            let n = step.frames.max(1);
            match &step.action {
                Action::Bet { seat, bet } => {
                    chips.push((*seat, *bet));
                    for _ in 0..n {
                        out.push(self.snapshot(ai, &live, &chips, &[], &[]));
                    }
                }
                Action::Wait => {
                    for _ in 0..n {
                        out.push(self.snapshot(ai, &live, &chips, &[], &[]));
                    }
                }
                Action::Deal { cards, to, face_up } => {
                    let from = self.shoe.center;
                    let slots = Slots { next: &mut count_at, vacated: &mut vacated };
                    self.place(ai, n, cards, face_up, *to, from, &mut live, &chips, slots, &mut out, rng);
                }
                Action::Introduce { card, to } => {
                    let from = off_table(self.anchors.get(to).map_or(self.shoe.center, |a| a.center));
                    let slots = Slots { next: &mut count_at, vacated: &mut vacated };
                    self.place(ai, n, &[*card], &[false], *to, from, &mut live, &chips, slots, &mut out, rng);
                }
                Action::Flip { id, face_up } => {
                    if let Some(i) = live.iter().position(|l| l.pc.id == *id) {
                        for f in 0..n {
                            let t = (f as f64 + 0.5) / n as f64;
                            if t >= 0.5 {
                                live[i].face_up = *face_up;
                            }
                            let lift = [(i, (PI * t).sin() * 25.0, (PI * t).cos().abs().max(0.08))];
                            let hand = self.dealer_hand_near(live[i].center);
                            out.push(self.snapshot(ai, &live, &chips, &lift, &[hand]));
                        }
                        live[i].face_up = *face_up;
                    }
                }
                Action::Peek { seat } => {
                    let idx: Vec<usize> = live
                        .iter()
                        .enumerate()
                        .filter(|(_, l)| l.at == Some(Position::Seat(*seat)))
                        .map(|(i, _)| i)
                        .collect();
                    let anchor = self.anchors.get(&Position::Seat(*seat)).copied();
                    for f in 0..n {
                        let t = (f as f64 + 0.5) / n as f64;
                        let lift: Vec<(usize, f64, f64)> =
                            idx.iter().map(|&i| (i, (PI * t).sin() * 8.0, 1.0)).collect();
                        let hands: Vec<HandOverTable> = anchor
                            .map(|a| {
                                let out_dir = a.center.y.atan2(a.center.x);
                                let p =
                                    Point::new(a.center.x + out_dir.cos() * 70.0, a.center.y + out_dir.sin() * 70.0);
                                HandOverTable { position_mm: p, angle_rad: out_dir, dealer: false }
                            })
                            .into_iter()
                            .collect();
                        out.push(self.snapshot(ai, &live, &chips, &lift, &hands));
                    }
                }
                Action::Collect { ids } => {
                    let mut targets = Vec::new();
                    let mut emptied: Vec<Position> = Vec::new();
                    for id in ids {
                        if let Some(i) = live.iter().position(|l| l.pc.id == *id) {
                            if let Some(from) = live[i].at.filter(|p| *p != Position::Discard) {
                                emptied.push(from);
                            }
                            let k = count_at.entry(Position::Discard).or_default();
                            let (p, ang) = self.slot(Position::Discard, *k, rng);
                            *k += 1;
                            live[i].face_up = false;
                            live[i].at = None;
                            targets.push((i, p, ang, 0));
                        }
                    }
                    self.animate(ai, n, &mut live, &chips, &mut out, &targets, true);
                    for (i, _, _, _) in &targets {
                        live[*i].at = Some(Position::Discard);
                    }
                    // A position left empty by the collection (a partial deal
                    // gathered after a shuffler failure) is dealt again from its
                    // first slot: the redeal lies where a deal lies.
                    for pos in emptied {
                        if !live.iter().any(|l| l.at == Some(pos)) {
                            count_at.remove(&pos);
                        }
                    }
                }
                Action::SetAside { id } => {
                    if let Some(i) = live.iter().position(|l| l.pc.id == *id) {
                        // Left out face up beside the rack's cards, in view; the hand's next
                        // card takes its place in the hand.
                        if let Some(from) = live[i].at.filter(|p| *p != Position::Discard) {
                            vacated.entry(from).or_default().push((live[i].center, live[i].angle));
                        }
                        let (p, ang) = self.slot(Position::Discard, 0, rng);
                        live[i].at = None;
                        self.animate(ai, n, &mut live, &chips, &mut out, &[(i, p, ang, 0)], true);
                        live[i].at = Some(Position::Discard);
                    }
                }
                Action::Remove { id } => {
                    if let Some(i) = live.iter().position(|l| l.pc.id == *id) {
                        live[i].at = None;
                        let target = off_table(live[i].center);
                        let ang = live[i].angle;
                        self.animate(ai, n, &mut live, &chips, &mut out, &[(i, target, ang, 0)], false);
                        live.remove(i);
                    }
                }
            }
        }
        out
    }

    /// Cards travel from `from` to their slots at `to`.
    #[allow(clippy::too_many_arguments)]
    fn place(
        &self,
        ai: usize,
        n: u32,
        cards: &[PhysicalCard],
        face_up: &[bool],
        to: Position,
        from: Point,
        live: &mut Vec<Live>,
        chips: &[(Seat, BetKind)],
        slots: Slots<'_>,
        out: &mut Vec<FrameState>,
        rng: &mut Rng,
    ) {
        let mut targets = Vec::new();
        for (i, pc) in cards.iter().enumerate() {
            let (p, ang) = match slots.vacated.get_mut(&to).and_then(Vec::pop) {
                Some(place) => place,
                None => {
                    let k = slots.next.entry(to).or_default();
                    let place = self.slot(to, *k, rng);
                    *k += 1;
                    place
                }
            };
            live.push(Live {
                pc: *pc,
                face_up: face_up.get(i).copied().unwrap_or(false),
                center: from,
                angle: self.shoe.angle,
                at: None,
            });
            targets.push((live.len() - 1, p, ang, i));
        }
        self.animate(ai, n, live, chips, out, &targets, true);
        for (idx, _, _, _) in &targets {
            live[*idx].at = Some(to);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn animate(
        &self,
        ai: usize,
        n: u32,
        live: &mut [Live],
        chips: &[(Seat, BetKind)],
        out: &mut Vec<FrameState>,
        targets: &[(usize, Point, f64, usize)],
        dealer_hand: bool,
    ) {
        let starts: Vec<(Point, f64)> = targets.iter().map(|(i, _, _, _)| (live[*i].center, live[*i].angle)).collect();
        for f in 0..n {
            let t0 = f as f64 / n as f64;
            let t1 = (f + 1) as f64 / n as f64;
            let ease = |t: f64| t * t * (3.0 - 2.0 * t);
            let mut vel = Vec::new();
            for ((i, to, ang, packet), (from, a0)) in targets.iter().zip(&starts) {
                let e1 = ease(t1);
                let e0 = ease(t0);
                // A packet from a shuffler travels together, slightly fanned.
                let fan = *packet as f64 * 4.0 * (1.0 - e1);
                let p = Point::new(from.x + (to.x - from.x) * e1 + fan, from.y + (to.y - from.y) * e1);
                let prev = Point::new(from.x + (to.x - from.x) * e0, from.y + (to.y - from.y) * e0);
                live[*i].center = p;
                live[*i].angle = a0 + (ang - a0) * e1;
                vel.push((*i, [p.x - prev.x, p.y - prev.y]));
            }
            let hands: Vec<HandOverTable> = if dealer_hand {
                targets.first().map(|(i, _, _, _)| self.dealer_hand_near(live[*i].center)).into_iter().collect()
            } else {
                targets
                    .first()
                    .map(|(i, _, _, _)| {
                        let c = live[*i].center;
                        HandOverTable { position_mm: c, angle_rad: c.y.atan2(c.x), dealer: false }
                    })
                    .into_iter()
                    .collect()
            };
            let mut frame = self.snapshot(ai, live, chips, &[], &hands);
            for (i, v) in vel {
                if let Some(c) = frame.cards.iter_mut().find(|c| c.id == live[i].pc.id) {
                    c.velocity_mm = v;
                    c.at = None;
                }
            }
            out.push(frame);
        }
    }

    fn dealer_hand_near(&self, p: Point) -> HandOverTable {
        // The dealer reaches from their side (−y); the palm sits just behind the card.
        HandOverTable { position_mm: Point::new(p.x, p.y - 55.0), angle_rad: -PI / 2.0, dealer: true }
    }

    fn snapshot(
        &self,
        ai: usize,
        live: &[Live],
        chips: &[(Seat, BetKind)],
        lift: &[(usize, f64, f64)],
        hands: &[HandOverTable],
    ) -> FrameState {
        let cards = live
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (h, w) = lift.iter().find(|x| x.0 == i).map_or((0.0, 1.0), |x| (x.1, x.2));
                CardState {
                    id: l.pc.id,
                    card: l.pc.card,
                    face_up: l.face_up,
                    center_mm: l.center,
                    angle_rad: l.angle,
                    width_scale: w,
                    height_mm: h,
                    velocity_mm: [0.0, 0.0],
                    at: l.at,
                }
            })
            .collect();
        FrameState { action: ai, cards, chips: chips.to_vec(), hands: hands.to_vec() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::layout;
    use crate::rules::{Ruleset, RulesetId};
    use crate::sim::script::{plan_round, Scenario};

    #[test]
    fn dealt_cards_end_in_their_zones_and_the_table_is_cleared() {
        for id in RulesetId::ALL {
            let rs = Ruleset::new(id);
            let cal = layout::simulated_calibration(id, "T", 1920, 1080, &layout::default_pose(), None);
            let g = cal.validate(std::path::Path::new("mem")).unwrap();
            let tl = Timeline::new(&g, rs.cards_per_hand);
            let plan = plan_round(&rs, Scenario::Clean, &mut Rng::seeded(3), 0).unwrap();
            let frames = tl.frames(&plan, &mut Rng::seeded(4));
            assert_eq!(frames.len() as u32, plan.actions.iter().map(|s| s.frames.max(1)).sum::<u32>());
            // After the deal and before collection, every dealt card lies in its own zone.
            let reveal = frames
                .iter()
                .rposition(|f| f.cards.iter().all(|c| c.face_up || c.at == Some(Position::Discard)))
                .unwrap();
            let f = &frames[reveal.saturating_sub(25)];
            for c in f.cards.iter().filter(|c| c.at.is_some() && c.at != Some(Position::Discard)) {
                let zone = g.zone_at(c.center_mm).map(|z| z.kind);
                let expected = match c.at.unwrap() {
                    Position::Seat(s) => ZoneKind::Hand { seat: s.0 },
                    Position::Dealer => ZoneKind::DealerHand,
                    Position::Community => ZoneKind::Community,
                    Position::Discard => ZoneKind::Discard,
                };
                assert_eq!(zone, Some(expected), "{id}: {} at {:?}", c.card, c.center_mm);
            }
            // The last frame: everything in the discard rack, face down.
            let last = frames.last().unwrap();
            assert!(last.cards.iter().all(|c| c.at == Some(Position::Discard) && !c.face_up), "{id}");
        }
    }
}
