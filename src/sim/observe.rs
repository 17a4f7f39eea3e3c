//! Detections without rendering: a frame's ground truth ([`FrameState`]) turned into what a fair
//! card detector would report, with a detector's noise. The tracker and verifier tests
//! (tests/track_verify.rs) and `tablecam dashboard --demo` drive the real tracker with it; what
//! the camera pipeline does with rendered video is measured by `tablecam eval-scenarios`.

use std::collections::BTreeMap;

use crate::calib::{Point, TableGeometry};
use crate::events::BackendHint;
use crate::rng::Rng;
use crate::rules::{BetKind, Card};
use crate::sim::script::{RoundPlan, FPS};
use crate::sim::timeline::FrameState;
use crate::track::{CardObservation, FrameObservations, ObservedFace, SpotPresence};

/// A detector's noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// Chance that a visible card is not detected in a frame.
    pub flicker: f64,
    /// Chance per card and frame that a burst of missed detections starts (2–6 frames).
    pub burst: f64,
    /// Quad corner jitter, pixels.
    pub jitter_px: f64,
    /// Chance that a still face-up card is read as another card (with a middling confidence).
    pub misread: f64,
    /// Chance that a still face-up card is not read.
    pub unread: f64,
    /// A face-up card that is never read (e.g. a deciding card under glare), by physical id.
    pub never_read: Option<u32>,
}

impl Noise {
    /// No noise: every visible card found and read.
    pub fn none() -> Noise {
        Noise { flicker: 0.0, burst: 0.0, jitter_px: 0.0, misread: 0.0, unread: 0.0, never_read: None }
    }

    /// What the tracker must cope with: 3 % flicker, bursts, 2 % misreads, 12 % unread.
    pub fn realistic() -> Noise {
        Noise { flicker: 0.03, burst: 0.004, jitter_px: 1.0, misread: 0.02, unread: 0.12, never_read: None }
    }
}

/// A frame's detections from its ground truth. Cards covered by a card drawn above them or under
/// a dealer's hand are not seen; cards in flight or edge-on are `unknown`. `bursts` carries the
/// missed-detection bursts from frame to frame; `size` is the picture (detections outside it are
/// not seen). Detections come in a random order, as a detector's would.
pub fn observe(
    g: &TableGeometry,
    st: &FrameState,
    frame: u64,
    noise: &Noise,
    rng: &mut Rng,
    bursts: &mut BTreeMap<u32, u32>,
    size: (f64, f64),
) -> FrameObservations {
    let [cw, ch] = g.calibration.card_size_mm;
    let mut cards = Vec::new();
    for (i, c) in st.cards.iter().enumerate() {
        let covered = st.cards[i + 1..].iter().any(|o| o.center_mm.dist(c.center_mm) < 0.45 * cw);
        let under_hand = st.hands.iter().any(|h| h.position_mm.dist(c.center_mm) < 45.0);
        let burst = bursts.entry(c.id).or_insert(0);
        if *burst == 0 && rng.unit_f64() < noise.burst {
            *burst = 2 + rng.below(5);
        }
        let in_burst = *burst > 0;
        if in_burst {
            *burst -= 1;
        }
        if covered || under_hand || in_burst || rng.unit_f64() < noise.flicker {
            continue;
        }
        let (s, co) = c.angle_rad.sin_cos();
        let (hw, hh) = (cw * c.width_scale / 2.0, ch / 2.0);
        let corner = |dx: f64, dy: f64| Point::new(c.center_mm.x + dx * co - dy * s, c.center_mm.y + dx * s + dy * co);
        let corners = [corner(-hw, -hh), corner(hw, -hh), corner(hw, hh), corner(-hw, hh)];
        let mut quad = [Point::new(0.0, 0.0); 4];
        let mut ok = true;
        for (q, p) in quad.iter_mut().zip(corners) {
            match g.table_to_image(p) {
                Some(px) => {
                    *q = Point::new(
                        px.x + (rng.unit_f64() - 0.5) * 2.0 * noise.jitter_px,
                        px.y + (rng.unit_f64() - 0.5) * 2.0 * noise.jitter_px,
                    )
                }
                None => ok = false,
            }
        }
        let Point { x: cx, y: cy } = Point::mean(&quad);
        if !ok || !(0.0..size.0).contains(&cx) || !(0.0..size.1).contains(&cy) {
            continue;
        }
        let speed = c.velocity_mm[0].hypot(c.velocity_mm[1]);
        let conf = |rng: &mut Rng, lo: f64, hi: f64| (lo + rng.unit_f64() * (hi - lo)) as f32;
        let (face, confidence) = if !c.face_up {
            (ObservedFace::Back, conf(rng, 0.7, 0.99))
        } else if speed > 15.0 || c.width_scale < 0.6 || noise.never_read == Some(c.id) {
            // Blurred in flight, edge-on while turned, or never readable.
            (ObservedFace::Unknown, conf(rng, 0.1, 0.5))
        } else {
            let u = rng.unit_f64();
            if u < noise.misread {
                let other = Card::from_index(((c.card.index() as u32 + 1 + rng.below(51)) % 52) as u8)
                    .expect("an index below 52");
                (ObservedFace::Card(other), conf(rng, 0.5, 0.75))
            } else if u < noise.misread + noise.unread {
                (ObservedFace::Unknown, conf(rng, 0.2, 0.6))
            } else {
                (ObservedFace::Card(c.card), conf(rng, 0.7, 0.99))
            }
        };
        // No rank reads apart from the card's: a card known by its rank only is exercised by the
        // tracker's and the verifier's own tests.
        cards.push(CardObservation { face, confidence, face_up: c.face_up, quad, rank: None });
    }
    rng.shuffle(&mut cards);
    let spots = st.chips.iter().map(|(seat, bet)| SpotPresence { seat: seat.0, bet: *bet }).collect();
    FrameObservations { frame, time_ms: frame_ms(frame), cards, spots, changes: None }
}

/// Frame `frame`'s time at the simulator's frame rate, ms (rounded to µs, as the sessions are).
pub fn frame_ms(frame: u64) -> f64 {
    (frame as f64 * 1000.0 / FPS as f64 * 1000.0).round() / 1000.0
}

/// What the table's backend would tell about a round: its start (with the backend's id, if any),
/// the Progressive jackpot, the San Gong dice, each seat's bets with stakes (not the later play/raise, which are
/// decisions) and each betting seat's decision.
pub fn backend_hints(plan: &RoundPlan, round_id: Option<String>) -> Vec<BackendHint> {
    let mut h = vec![BackendHint::RoundStart { round_id }];
    if let Some(p) = &plan.round.progressive_pool {
        h.push(BackendHint::Jackpot { pool: p.pool, fixed: p.fixed.clone() });
    }
    if let Some(sg) = plan.sangong {
        h.push(BackendHint::Dice { banker: sg.banker.0, total: sg.dice_total, capital: None });
    }
    for hand in &plan.round.hands {
        let wagers = hand.wagers.iter().filter(|w| !matches!(w.bet, BetKind::Play | BetKind::Raise)).cloned().collect();
        h.push(BackendHint::Bets { seat: hand.seat.0, wagers });
        if !hand.wagers.is_empty() {
            h.push(BackendHint::Decision { seat: hand.seat.0, decision: hand.decision });
        }
    }
    h
}
