use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::time::Instant;

use super::*;

const TEST_HEIGHT_PX: u32 = 300;
/// Declared and measured aspect may differ by this fraction.
const ASPECT_TOLERANCE: f64 = 0.02;

fn digest(img: &RgbaImage) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    img.as_raw().hash(&mut h);
    img.dimensions().hash(&mut h);
    h.finish()
}

fn card(code: &str) -> Face {
    Face::Card(code.parse().expect("valid card code"))
}

fn packaged_installed() -> bool {
    std::path::Path::new("/usr/share/aisleriot/cards/anglo.svgz").is_file()
        && std::path::Path::new("/usr/share/carddecks/svg-standard/standard.svgz").is_file()
}

/// Checks one render: size, transparent rounded corners, opaque centre.
fn check_image(design: &DeckDesign, face: Face, img: &RgbaImage) {
    let what = format!("{} {}", design.name, face.label());
    assert_eq!(img.height(), TEST_HEIGHT_PX, "{what}: height");
    assert_eq!(img.width(), design.width_px(TEST_HEIGHT_PX), "{what}: width");
    let (w, h) = img.dimensions();
    for (x, y) in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)] {
        assert!(img.get_pixel(x, y)[3] < 64, "{what}: corner ({x},{y}) is not transparent: {:?}", img.get_pixel(x, y));
    }
    for (x, y) in [(w / 2, h / 2), (w / 2, 2), (2, h / 2), (w - 3, h / 2), (w / 2, h - 3)] {
        assert!(img.get_pixel(x, y)[3] >= 250, "{what}: ({x},{y}) is not opaque: {:?}", img.get_pixel(x, y));
    }
}

#[test]
fn every_design_renders_every_face() {
    let designs = catalogue();
    let mut slowest = (0.0f64, String::new());
    for design in &designs {
        assert!((0.60..=0.77).contains(&design.aspect), "{}: aspect {}", design.name, design.aspect);
        let t0 = Instant::now();
        let deck = design.load().unwrap_or_else(|e| panic!("{}: {e}", design.name));
        let load_s = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let mut digests = BTreeMap::new();
        for face in Face::all() {
            let img = deck.render(face, TEST_HEIGHT_PX).unwrap_or_else(|e| panic!("{}: {e}", design.name));
            check_image(design, face, &img);
            if let Some(other) = digests.insert(digest(&img), face) {
                panic!("{}: {} and {} render identically", design.name, other.label(), face.label());
            }
        }
        let per_face_ms = t1.elapsed().as_secs_f64() * 1000.0 / Face::COUNT as f64;
        println!(
            "{:32} {:18} load {:6.3} s, {:6.1} ms per face at {TEST_HEIGHT_PX} px",
            design.name, design.family, load_s, per_face_ms
        );
        if per_face_ms > slowest.0 {
            slowest = (per_face_ms, design.name.clone());
        }
        // Packaged decks: the declared aspect must match the artwork (within 2 %).
        if let Loaded::Sheet(sheet) = &deck.inner {
            for face in [card("AS"), card("KH"), card("10C"), Face::Back] {
                let measured = sheet.aspect(face).expect("measured");
                assert!(
                    (measured / design.aspect - 1.0).abs() < ASPECT_TOLERANCE,
                    "{} {}: artwork aspect {measured:.4}, declared {}",
                    design.name,
                    face.label(),
                    design.aspect
                );
            }
        }
    }
    println!("slowest: {:.1} ms per face ({})", slowest.0, slowest.1);
}

#[test]
fn renders_are_deterministic() {
    for design in catalogue().iter().step_by(3) {
        for face in [card("QD"), card("7S"), Face::Back] {
            let a = design.render(face, TEST_HEIGHT_PX).expect("render");
            let b = design.load().expect("load").render(face, TEST_HEIGHT_PX).expect("render");
            assert_eq!(digest(&a), digest(&b), "{} {}", design.name, face.label());
        }
    }
}

#[test]
fn names_unique_and_families_diverse() {
    let designs = catalogue();
    let names: BTreeSet<_> = designs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names.len(), designs.len(), "design names must be unique");
    let families = |procedural: bool| -> BTreeSet<&str> {
        designs
            .iter()
            .filter(|d| matches!(d.source, DesignSource::Procedural(_)) == procedural)
            .map(|d| d.family.as_str())
            .collect()
    };
    assert!(families(true).len() >= 4, "procedural families: {:?}", families(true));
    assert!(designs.iter().filter(|d| matches!(d.source, DesignSource::Procedural(_))).count() >= 12);
    if packaged_installed() {
        assert!(families(false).len() >= 6, "SVG families: {:?}", families(false));
    } else {
        eprintln!("card packages not installed (bash scripts/setup.sh): SVG decks not checked");
    }
    // A family is either procedural or packaged, never both.
    assert!(families(true).is_disjoint(&families(false)));
    for d in &designs {
        assert!(!d.licence.is_empty(), "{}: licence", d.name);
    }
}

#[test]
fn bellot_and_anglo_decks_share_families() {
    let fam = |name: &str| sheet::designs().into_iter().find(|d| d.name == name).expect(name).family;
    assert_eq!(fam("aisleriot-paris"), fam("aisleriot-bellot"));
    assert_eq!(fam("kde-gm-paris"), fam("aisleriot-bellot"));
    assert_eq!(fam("aisleriot-anglo"), fam("aisleriot-anglo-poker"));
}

#[test]
fn sheet_element_ids() {
    assert_eq!(SheetNaming::Aisleriot.element_id(card("KH")), "heart_king");
    assert_eq!(SheetNaming::Aisleriot.element_id(card("AS")), "spade_1");
    assert_eq!(SheetNaming::Kde.element_id(card("10C")), "10_club");
    assert_eq!(SheetNaming::Kde.element_id(Face::Back), "back");
}

#[test]
fn bad_height_is_an_error() {
    let design = &catalogue()[0];
    assert!(matches!(design.render(Face::Back, 3), Err(FacesError::BadHeight(3))));
}

#[test]
fn contact_sheet_has_a_row_per_design() {
    let designs: Vec<_> = catalogue().into_iter().take(2).collect();
    let faces = [card("AS"), Face::Back];
    let sheet = contact_sheet(&designs, &faces, 60).expect("contact sheet");
    assert!(sheet.height() >= 2 * 60 && sheet.height() < 3 * 60);
}

/// Regenerates docs/images/card_designs.png (run on purpose:
/// `cargo test --release --lib sim::faces -- --ignored write_contact_sheet`).
#[test]
#[ignore]
fn write_contact_sheet() {
    // TABLECAM_CONTACT_FILTER=proc- shows only the designs whose name contains it.
    let filter = std::env::var("TABLECAM_CONTACT_FILTER").unwrap_or_default();
    let designs: Vec<_> = catalogue().into_iter().filter(|d| d.name.contains(&filter)).collect();
    let height_px = std::env::var("TABLECAM_CONTACT_HEIGHT").ok().and_then(|h| h.parse().ok()).unwrap_or(94);
    // TABLECAM_CONTACT_FACES=QD,JS,back picks the faces.
    let faces = match std::env::var("TABLECAM_CONTACT_FACES") {
        Ok(list) => list.split(',').map(|c| if c == "back" { Face::Back } else { card(c) }).collect(),
        Err(_) => contact_faces(),
    };
    let sheet = contact_sheet(&designs, &faces, height_px).expect("contact sheet");
    let path = std::env::var("TABLECAM_CONTACT_SHEET").unwrap_or_else(|_| "docs/images/card_designs.png".to_string());
    if let Some(dir) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(dir).expect("create folder");
    }
    sheet.save(&path).expect("save contact sheet");
    println!("wrote {path} ({}x{})", sheet.width(), sheet.height());
}

/// Prints the measured aspect of every installed sheet (to fill in `sheet::SHEETS`).
#[test]
#[ignore]
fn print_sheet_aspects() {
    for design in sheet::designs() {
        let DesignSource::SvgSheet { path, naming } = &design.source else { continue };
        if !path.is_file() {
            continue;
        }
        let t0 = Instant::now();
        let loaded = sheet::LoadedSheet::open(&design.name, path, *naming).expect("open");
        let parse_s = t0.elapsed().as_secs_f64();
        let aspects: Vec<String> = [card("AS"), card("KH"), card("10C"), Face::Back]
            .into_iter()
            .map(|f| loaded.aspect(f).map(|a| format!("{a:.4}")).unwrap_or_else(|e| e.to_string()))
            .collect();
        println!("{:32} parse {parse_s:.3} s  aspects {}", design.name, aspects.join(" "));
    }
}
