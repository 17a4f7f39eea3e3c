//! A contact sheet of simulated frames: every ruleset under several camera
//! conditions, for a person to judge the simulator's realism.
use std::collections::BTreeMap;

use image::{imageops, RgbImage};

use super::faces;
use super::render::{Conditions, Renderer, TableStyle};
use super::script::{plan_round, Scenario};
use super::session::{random_pose, scene_of, FaceSet, SimError};
use super::timeline::Timeline;
use crate::calib::layout;
use crate::rng::Rng;
use crate::rules::{Ruleset, RulesetId};

/// Renders one late-round frame (cards revealed) per (ruleset, conditions) pair
/// at 1920×1080 and tiles them `tile_width` pixels wide, one row per ruleset.
pub fn contact_sheet(conditions: &[&str], seed: u64, tile_width: u32) -> Result<RgbImage, SimError> {
    let (w, h) = (1920u32, 1080u32);
    let tile_h = tile_width * h / w;
    let mut sheet = RgbImage::new(tile_width * conditions.len() as u32, tile_h * RulesetId::ALL.len() as u32);
    let catalogue = faces::catalogue();
    let styles = TableStyle::presets();
    for (row, id) in RulesetId::ALL.iter().enumerate() {
        let rs = Ruleset::new(*id);
        for (col, cond_name) in conditions.iter().enumerate() {
            let mut rng = Rng::seeded(seed + (row * 31 + col) as u64);
            let pose = random_pose(&mut rng);
            let mut cal = layout::simulated_calibration(*id, "SHEET", w, h, &pose, Some((-0.08, 0.01)));
            let design = &catalogue[(row * conditions.len() + col) % catalogue.len()];
            cal.card_size_mm = [88.9 * design.aspect, 88.9];
            let geometry = cal.validate(std::path::Path::new("<contact sheet>"))?;
            let faceset = FaceSet::new(&design.load()?, design.aspect, 240)?;
            let style = &styles[(row + col) % styles.len()];
            let renderer = Renderer::new(&geometry, style, seed)?;
            let timeline = Timeline::new(&geometry, rs.cards_per_hand);
            let plan = plan_round(&rs, Scenario::Clean, &mut rng, 0)?;
            let frames = timeline.frames(&plan, &mut rng);
            // The last frame before collection starts: every hand revealed.
            let pick = frames
                .iter()
                .rposition(|f| f.cards.iter().filter(|c| c.face_up).count() >= 4 && f.hands.is_empty())
                .unwrap_or(frames.len() / 2);
            let stakes = BTreeMap::new();
            let scene = scene_of(&frames[pick], &faceset, &timeline, &stakes);
            let conditions = Conditions::preset(cond_name)
                .ok_or_else(|| SimError::Bad(format!("unknown conditions {cond_name}")))?;
            let frame = renderer.render(&scene, &conditions, seed)?;
            let tile = imageops::resize(&frame.image, tile_width, tile_h, imageops::FilterType::Triangle);
            imageops::replace(&mut sheet, &tile, (col as u32 * tile_width) as i64, (row as u32 * tile_h) as i64);
        }
    }
    Ok(sheet)
}
