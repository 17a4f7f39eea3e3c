//! How a table looks: cloth, print, rail.

/// The weave of the cloth, which sets its fine texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeltTexture {
    /// Classic wool baize: fine isotropic fibre noise and soft mottling.
    Baize,
    /// Twill / speed cloth: a faint diagonal weave and little mottling.
    Twill,
    /// Brushed suede-like cloth: strong low-frequency shading, little grain.
    Suede,
}

/// The look of one table: felt, printed layout and rail.
#[derive(Debug, Clone, PartialEq)]
pub struct TableStyle {
    /// A name for people ("green").
    pub name: &'static str,
    /// Felt colour (sRGB) under the overhead light.
    pub felt_rgb: [u8; 3],
    /// The cloth's weave.
    pub felt_texture: FeltTexture,
    /// Seed of the cloth's texture (its mottling and grain).
    pub texture_seed: u64,
    /// Colour of the printed lines and labels.
    pub print_rgb: [u8; 3],
    /// Colour of highlighted print (side-bet circles, titles).
    pub accent_rgb: [u8; 3],
    /// The padded rail's leather.
    pub rail_rgb: [u8; 3],
    /// Print the labels (bet names, title, qualifier band).
    pub labels: bool,
    /// Print outlines of the players' card boxes.
    pub hand_boxes: bool,
}

impl TableStyle {
    /// Casino green wool, white print, gold accents, black rail.
    pub fn green() -> TableStyle {
        TableStyle {
            name: "green",
            felt_rgb: [22, 98, 58],
            felt_texture: FeltTexture::Baize,
            texture_seed: 11,
            print_rgb: [232, 228, 212],
            accent_rgb: [222, 184, 92],
            rail_rgb: [34, 26, 22],
            labels: true,
            hand_boxes: false,
        }
    }

    /// Royal blue speed cloth, white print, brown rail, card boxes printed.
    pub fn blue() -> TableStyle {
        TableStyle {
            name: "blue",
            felt_rgb: [24, 58, 122],
            felt_texture: FeltTexture::Twill,
            texture_seed: 23,
            print_rgb: [226, 230, 236],
            accent_rgb: [236, 200, 110],
            rail_rgb: [58, 36, 24],
            labels: true,
            hand_boxes: true,
        }
    }

    /// Burgundy suede, gold print, black rail.
    pub fn red() -> TableStyle {
        TableStyle {
            name: "red",
            felt_rgb: [112, 24, 32],
            felt_texture: FeltTexture::Suede,
            texture_seed: 37,
            print_rgb: [226, 196, 120],
            accent_rgb: [240, 214, 150],
            rail_rgb: [26, 22, 22],
            labels: true,
            hand_boxes: false,
        }
    }

    /// Dark teal baize, pale print, no labels (a minimal layout).
    pub fn dark_teal() -> TableStyle {
        TableStyle {
            name: "dark-teal",
            felt_rgb: [18, 78, 80],
            felt_texture: FeltTexture::Baize,
            texture_seed: 41,
            print_rgb: [200, 218, 210],
            accent_rgb: [214, 190, 120],
            rail_rgb: [40, 30, 26],
            labels: false,
            hand_boxes: true,
        }
    }

    /// Every preset.
    pub fn presets() -> Vec<TableStyle> {
        vec![TableStyle::green(), TableStyle::blue(), TableStyle::red(), TableStyle::dark_teal()]
    }

    /// A preset by name (`green`, `blue`, `red`, `dark-teal`).
    pub fn preset(name: &str) -> Option<TableStyle> {
        TableStyle::presets().into_iter().find(|s| s.name == name)
    }
}

impl Default for TableStyle {
    fn default() -> Self {
        TableStyle::green()
    }
}
