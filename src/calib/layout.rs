//! Standard table layouts of each ruleset, in table millimetres: a semicircular
//! table with the dealer on the straight edge and the seats around the arc.
//!
//! A user of a real table marks the table's reference points and gets these
//! zones; the simulator draws its tables from them.
use std::f64::consts::PI;

use super::camera::{CameraPose, LensDistortion};
use super::geometry::{Point, Polygon};
use super::{Calibration, Zone, ZoneKind, CALIBRATION_VERSION};
use crate::rules::{BetKind, Ruleset, RulesetId};

/// Radius of the table's arc (the players' edge), mm.
pub const TABLE_RADIUS_MM: f64 = 1100.0;
/// Half-width of the straight dealer edge, mm.
pub const TABLE_HALF_WIDTH_MM: f64 = 1100.0;
/// Poker-size card, mm.
pub const CARD_SIZE_MM: [f64; 2] = [63.5, 88.9];

const BET_SPOT_RADIUS_MM: f64 = 42.0;

/// Angle (radians, from +x) of a seat's centre line; seat 1 at the dealer's left (−x).
pub fn seat_angle(seat: u8, seats: u8) -> f64 {
    let (first, last) = (168.0f64, 12.0f64);
    let t = if seats > 1 { (seat - 1) as f64 / (seats - 1) as f64 } else { 0.5 };
    (first + (last - first) * t).to_radians()
}

/// A point at `radius` along a seat's centre line.
pub fn on_seat_line(seat: u8, seats: u8, radius: f64) -> Point {
    let a = seat_angle(seat, seats);
    Point::new(radius * a.cos(), radius * a.sin())
}

/// Number of seats drawn on a ruleset's table (San Gong: all eight places).
pub fn seats_of(rs: &Ruleset) -> u8 {
    if rs.id == RulesetId::Sangong1996 {
        8
    } else {
        rs.player_hands.1
    }
}

/// Whether the Progressive bet has no spot of its own but shares the Six Card Bonus spot (the
/// additional bets share one spot nearest the dealer, fortune3cp-2025 Art. 5(3)–(4)): chips
/// there may be either bet, so a camera cannot tell a Progressive bet.
pub fn progressive_shares_spot(rs: &Ruleset) -> bool {
    let bets: Vec<BetKind> = rs.bet_spots.iter().map(|(b, _)| *b).collect();
    bets.contains(&BetKind::Progressive) && bets.contains(&BetKind::SixCardBonus)
}

/// The zones of a ruleset's standard table.
pub fn standard_zones(ruleset: RulesetId) -> Vec<Zone> {
    let rs = Ruleset::new(ruleset);
    let seats = seats_of(&rs);
    let mut zones = Vec::new();
    let hand_len = if rs.cards_per_hand == 5 { 230.0 } else { 190.0 };
    // Bet spots from the dealer outwards (e.g. fortune3cp-2025 Art. 5(3)–(4)):
    // the additional bets share one spot nearest the dealer.
    let mut spots: Vec<BetKind> = Vec::new();
    for (bet, _) in &rs.bet_spots {
        let merged = *bet == BetKind::Progressive && progressive_shares_spot(&rs);
        if !merged {
            spots.push(*bet);
        }
    }
    for seat in 1..=seats {
        let a = seat_angle(seat, seats);
        let tangent = a - PI / 2.0;
        zones.push(Zone {
            name: format!("seat {seat} hand"),
            kind: ZoneKind::Hand { seat },
            polygon_mm: Polygon::rect(on_seat_line(seat, seats, 590.0), hand_len, 150.0, tangent),
        });
        for (k, bet) in spots.iter().enumerate() {
            let r = 720.0 + 92.0 * k as f64;
            zones.push(Zone {
                name: format!("seat {seat} {bet}"),
                kind: ZoneKind::BetSpot { seat, bet: *bet },
                polygon_mm: Polygon::circle(on_seat_line(seat, seats, r), BET_SPOT_RADIUS_MM, 24),
            });
        }
    }
    if rs.id != RulesetId::Sangong1996 {
        let dealer_len = if rs.cards_per_hand == 5 { 380.0 } else { 300.0 };
        zones.push(Zone {
            name: "dealer hand".into(),
            kind: ZoneKind::DealerHand,
            polygon_mm: Polygon::rect(Point::new(0.0, 210.0), dealer_len, 150.0, 0.0),
        });
    }
    if rs.community_cards > 0 {
        zones.push(Zone {
            name: "community".into(),
            kind: ZoneKind::Community,
            polygon_mm: Polygon::rect(Point::new(0.0, 370.0), 200.0, 130.0, 0.0),
        });
    }
    zones.push(Zone {
        name: "shoe".into(),
        kind: ZoneKind::Shoe,
        polygon_mm: Polygon::rect(Point::new(330.0, 80.0), 160.0, 110.0, 0.0),
    });
    zones.push(Zone {
        name: "discard rack".into(),
        kind: ZoneKind::Discard,
        polygon_mm: Polygon::rect(Point::new(-330.0, 80.0), 160.0, 110.0, 0.0),
    });
    zones
}

/// A typical overhead camera: above the dealer's side, looking down at the
/// table with a moderate tilt.
pub fn default_pose() -> CameraPose {
    CameraPose { position_mm: [0.0, 250.0, 1900.0], target_mm: [0.0, 520.0], hfov_deg: 78.0, roll_deg: 0.0 }
}

/// The calibration of a simulated camera at `pose` over a ruleset's standard table.
pub fn simulated_calibration(
    ruleset: RulesetId,
    table_id: &str,
    width: u32,
    height: u32,
    pose: &CameraPose,
    radial: Option<(f64, f64)>,
) -> Calibration {
    let (h, [fx, fy, cx, cy]) = pose.homography(width, height);
    let lens = radial.map(|(k1, k2)| LensDistortion { fx, fy, cx, cy, k1, k2, p1: 0.0, p2: 0.0, k3: 0.0 });
    Calibration {
        version: CALIBRATION_VERSION,
        table_id: table_id.to_string(),
        camera_id: format!("{table_id}-cam1"),
        ruleset,
        image_width: width,
        image_height: height,
        table_to_image: h,
        lens,
        card_size_mm: CARD_SIZE_MM,
        simulated_pose: Some(*pose),
        zones: standard_zones(ruleset),
    }
}
