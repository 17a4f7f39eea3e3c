//! The `tablecam run` configuration: a versioned JSON file, read in two tiers — raw serde
//! structs (`deny_unknown_fields`, units in the names) → [`RunConfig::validate`] → checked
//! paths and parsed sources — with errors that name the file, the field and the fix.
//!
//! Relative paths are taken from the directory of the configuration file, so that a
//! configuration works from wherever `tablecam run` is started (docs/pipeline.md).
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::PipelineError;
use crate::record::recording::{RecordingOptions, Retention};
use crate::rules::RulesetId;
use crate::source::SourceSpec;

/// The configuration format's version.
pub const CONFIG_VERSION: u32 = 1;

/// Most recognizer workers one process may run (each loads its own models).
pub const MAX_WORKERS: usize = 64;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Format version: [`CONFIG_VERSION`].
    pub version: u32,
    /// The tables this process watches (one camera each).
    pub tables: Vec<TableConfig>,
    /// The recognition models and how many workers run them.
    pub recognizer: RecognizerConfig,
    /// Where events are published (ZeroMQ PUB); none: journal only.
    #[serde(default)]
    pub publisher: Option<PublisherConfig>,
    /// The table backend's inbound channel (ZeroMQ); none: vision alone.
    #[serde(default)]
    pub backend: Option<BackendConfig>,
    /// The per-table journals.
    pub journal: JournalConfig,
    /// Where the frames the pipeline saw are recorded; none: not recorded.
    #[serde(default)]
    pub recording: Option<RecordingConfig>,
    /// A health event per table every this many ms of frame time (0: only at the end).
    #[serde(default = "default_health_interval_ms")]
    pub health_interval_ms: u64,
    /// Capacity of each channel between stages, in frames or events.
    #[serde(default = "default_queue_capacity")]
    pub queue_capacity: usize,
}

fn default_health_interval_ms() -> u64 {
    5_000
}

fn default_queue_capacity() -> usize {
    8
}

/// One table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableConfig {
    /// The table's id: in every event, topic and journal file name (letters, digits, `-`, `_`).
    pub table_id: String,
    /// The camera's id (default: the calibration's).
    #[serde(default)]
    pub camera_id: Option<String>,
    /// The frames: a video file, an image folder, a stream URL, `camera:N` or `sim:RULESET`
    /// (see `tablecam sources probe`).
    pub source: String,
    /// The camera's calibration file (`tablecam calibrate`).
    pub calibration: PathBuf,
    /// The ruleset played at the table; must be the calibration's.
    pub ruleset: RulesetId,
    /// An empty-table frame of this camera for bet presence (`tablecam presence reference`);
    /// none: presence learns the empty felt from the frames themselves.
    #[serde(default)]
    pub presence_reference: Option<PathBuf>,
    /// Seed of a `sim:` source.
    #[serde(default)]
    pub sim_seed: Option<u64>,
    /// The deck design dealt at this table, as the classifier's training names it (e.g.
    /// `kde-standard`). When the classifier was trained on it (metadata `tablecam.designs`) the
    /// deck is *enrolled* and agreeing unsure readings confirm cards too (docs/pipeline.md,
    /// "Enrolled decks"); none, or a design it was not trained on: only named reads do.
    #[serde(default)]
    pub deck: Option<String>,
}

/// The recognition models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecognizerConfig {
    /// The card locator model.
    pub locator: PathBuf,
    /// The index-corner classifier model.
    pub classifier: PathBuf,
    /// A whole-card classifier read with the index corners (optional; docs/recognition.md,
    /// "Whole-card classifier").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub face_classifier: Option<PathBuf>,
    /// A glyph classifier that reads the indexes found in the corners of the cards the other two
    /// left unnamed (optional; docs/recognition.md, "Calibrated tables: index glyphs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glyph_classifier: Option<PathBuf>,
    /// Worker threads, each with its own sessions (about one per core left after the sources).
    #[serde(default = "one")]
    pub workers: usize,
    /// ONNX Runtime intra-op threads per session.
    #[serde(default = "one")]
    pub intra_threads: usize,
}

fn one() -> usize {
    1
}

/// ZeroMQ publishing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublisherConfig {
    /// The PUB socket's address, e.g. `tcp://127.0.0.1:5560`.
    pub endpoint: String,
    /// CURVE encryption and authentication; none: plain (loopback only, docs/publish.md).
    #[serde(default)]
    pub curve: Option<CurveConfig>,
}

/// CURVE key files (`tablecam keys`, docs/publish.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveConfig {
    /// This server's secret key file.
    pub server_secret_key_file: PathBuf,
    /// A folder of the public keys of the clients allowed to connect; none: any client that
    /// knows the server's public key.
    #[serde(default)]
    pub authorized_clients_dir: Option<PathBuf>,
}

/// The backend's inbound channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    /// The address tablecam listens on for backend messages, e.g. `tcp://127.0.0.1:5561`.
    pub endpoint: String,
    /// CURVE for this socket too.
    #[serde(default)]
    pub curve: Option<CurveConfig>,
}

/// When journal appends reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsyncSetting {
    /// After every event, before it is published.
    Always,
    /// After every n-th event.
    EveryN(u32),
    /// At most this many ms apart.
    IntervalMs(u64),
    /// Left to the operating system.
    Never,
}

/// The journals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalConfig {
    /// Folder of the journals, one `<table_id>.jsonl` per table.
    pub dir: PathBuf,
    /// When appends are forced to disk.
    #[serde(default = "always")]
    pub fsync: FsyncSetting,
}

fn always() -> FsyncSetting {
    FsyncSetting::Always
}

/// Recording of frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingConfig {
    /// Folder of the recordings: each run records each table into
    /// `<dir>/<table_id>/<UTC start time>/` (a recording, as `tablecam replay` and `dispute` read).
    pub dir: PathBuf,
    /// JPEG quality of the recorded frames, 1..=100 (default 92): what the pipeline recognizes.
    #[serde(default)]
    pub jpeg_quality: Option<i32>,
    /// Retention: keep at most this many GB of segments per table and run (default: no limit).
    #[serde(default)]
    pub max_total_gb: Option<f64>,
    /// Retention: delete segments older than this many hours (default: no limit).
    #[serde(default)]
    pub max_age_hours: Option<f64>,
}

impl RecordingConfig {
    /// The recorder's options: segments and JPEG quality as the defaults unless given, and the
    /// retention limits.
    pub fn options(&self) -> RecordingOptions {
        let d = RecordingOptions::default();
        RecordingOptions {
            jpeg_quality: self.jpeg_quality.unwrap_or(d.jpeg_quality),
            retention: Retention {
                max_total_bytes: self.max_total_gb.map(|g| (g * 1e9) as u64),
                max_age: self.max_age_hours.map(|h| std::time::Duration::from_secs_f64(h * 3600.0)),
            },
            ..d
        }
    }
}

/// A validated configuration: paths resolved and checked, sources parsed.
#[derive(Debug, Clone)]
pub struct ValidatedConfig {
    /// The file it came from.
    pub path: PathBuf,
    /// Its contents, with every path made absolute or relative to the working directory.
    pub config: RunConfig,
    /// Each table's source, in the order of `tables`.
    pub sources: Vec<SourceSpec>,
}

fn config_error(path: &Path, field: impl Into<String>, message: impl Into<String>) -> PipelineError {
    PipelineError::Config { path: path.to_path_buf(), field: field.into(), message: message.into() }
}

/// Deserializes one part of the file, naming it in the error.
fn part<T: DeserializeOwned>(path: &Path, field: &str, value: serde_json::Value) -> Result<T, PipelineError> {
    serde_json::from_value(value).map_err(|e| {
        config_error(path, field, format!("{e} (docs/pipeline.md lists every field; config/ has examples)"))
    })
}

/// Checks that section `name` of the file, if present, is a `T`.
fn section<T: DeserializeOwned>(
    path: &Path,
    map: &serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Result<(), PipelineError> {
    match map.get(name) {
        Some(v) => part::<T>(path, name, v.clone()).map(drop),
        None => Ok(()),
    }
}

impl RunConfig {
    /// Reads and validates a configuration file.
    pub fn load(path: &Path) -> Result<ValidatedConfig, PipelineError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| PipelineError::Io { path: path.to_path_buf(), source })?;
        RunConfig::parse(&text, path)?.validate(path)
    }

    /// Parses a configuration (`path` names it in errors and anchors relative paths).
    pub fn parse(text: &str, path: &Path) -> Result<RunConfig, PipelineError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| config_error(path, "(file)", format!("not valid JSON: {e}")))?;
        let serde_json::Value::Object(mut map) = value else {
            return Err(config_error(path, "(file)", "the configuration must be a JSON object"));
        };
        match map.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(CONFIG_VERSION) => {}
            Some(v) => {
                return Err(config_error(
                    path,
                    "version",
                    format!("version {v} is not supported; this build reads version {CONFIG_VERSION}"),
                ))
            }
            None => return Err(config_error(path, "version", format!("missing; write \"version\": {CONFIG_VERSION}"))),
        }
        // Tables one by one, so that an error names which.
        let tables = match map.remove("tables") {
            Some(serde_json::Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, t)| part::<TableConfig>(path, &format!("tables[{i}]"), t))
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return Err(config_error(path, "tables", "must be a list of tables")),
            None => return Err(config_error(path, "tables", "missing; list at least one table")),
        };
        // Each section alone first, so that an error names the section rather than the file.
        section::<RecognizerConfig>(path, &map, "recognizer")?;
        section::<Option<PublisherConfig>>(path, &map, "publisher")?;
        section::<Option<BackendConfig>>(path, &map, "backend")?;
        section::<JournalConfig>(path, &map, "journal")?;
        section::<Option<RecordingConfig>>(path, &map, "recording")?;
        map.insert("tables".into(), serde_json::Value::Array(vec![]));
        let mut config: RunConfig = part(path, "(top level)", serde_json::Value::Object(map))?;
        config.tables = tables;
        Ok(config)
    }

    /// Checks every field and resolves paths against the file's directory.
    pub fn validate(mut self, path: &Path) -> Result<ValidatedConfig, PipelineError> {
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let resolve = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
        let must_exist = |field: &str, p: &Path, what: &str| -> Result<(), PipelineError> {
            if p.exists() {
                Ok(())
            } else {
                Err(config_error(path, field, format!("{} does not exist; {what}", p.display())))
            }
        };
        if self.tables.is_empty() {
            return Err(config_error(path, "tables", "empty; list at least one table"));
        }
        let mut sources = Vec::new();
        let mut ids = std::collections::BTreeSet::new();
        for (i, t) in self.tables.iter_mut().enumerate() {
            let field = |f: &str| format!("tables[{i}].{f}");
            if t.table_id.is_empty() || !t.table_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                return Err(config_error(
                    path,
                    field("table_id"),
                    format!("{:?}: use letters, digits, '-' and '_' only (it names files and topics)", t.table_id),
                ));
            }
            if !ids.insert(t.table_id.clone()) {
                return Err(config_error(path, field("table_id"), format!("{} is listed twice", t.table_id)));
            }
            t.calibration = resolve(&t.calibration);
            must_exist(&field("calibration"), &t.calibration, "make one with `tablecam calibrate`")?;
            let cal = crate::calib::Calibration::load(&t.calibration)
                .map_err(|e| config_error(path, field("calibration"), e.to_string()))?;
            if cal.calibration.ruleset != t.ruleset {
                return Err(config_error(
                    path,
                    field("ruleset"),
                    format!(
                        "{} but the calibration {} is for {}; use that table's calibration or its ruleset",
                        t.ruleset,
                        t.calibration.display(),
                        cal.calibration.ruleset
                    ),
                ));
            }
            if let Some(r) = &mut t.presence_reference {
                *r = resolve(r);
                must_exist(&field("presence_reference"), r, "capture one with `tablecam presence reference`")?;
            }
            // Paths in a source are relative to the file too; URLs, cameras and sims are not paths.
            let spec = SourceSpec::parse(&t.source).map_err(|e| config_error(path, field("source"), e.to_string()))?;
            let spec = match spec {
                SourceSpec::File(p) | SourceSpec::Folder(p) => {
                    let p = resolve(&p);
                    must_exist(
                        &field("source"),
                        &p,
                        "give a video file, an image folder, a URL, camera:N or sim:RULESET",
                    )?;
                    SourceSpec::parse(&p.to_string_lossy())
                        .map_err(|e| config_error(path, field("source"), e.to_string()))?
                }
                other => other,
            };
            if let SourceSpec::Sim(rs) = &spec {
                if *rs != t.ruleset {
                    return Err(config_error(path, field("source"), format!("sim:{rs} at a {} table", t.ruleset)));
                }
            }
            sources.push(spec);
        }
        let r = &mut self.recognizer;
        if r.workers == 0 || r.workers > MAX_WORKERS {
            return Err(config_error(path, "recognizer.workers", format!("{}: use 1 to {MAX_WORKERS}", r.workers)));
        }
        if r.intra_threads == 0 {
            return Err(config_error(path, "recognizer.intra_threads", "0: use at least 1"));
        }
        let models = [("recognizer.locator", &mut r.locator), ("recognizer.classifier", &mut r.classifier)];
        let optional = [
            ("recognizer.face_classifier", &mut r.face_classifier),
            ("recognizer.glyph_classifier", &mut r.glyph_classifier),
        ];
        for (f, p) in models.into_iter().chain(optional.into_iter().filter_map(|(f, p)| p.as_mut().map(|p| (f, p)))) {
            let resolved = resolve(p);
            // Model paths may also name the project's models/ from anywhere (resolve_model).
            let found = crate::recognize::resolve_model(&resolved);
            let found = if found.exists() { found } else { crate::recognize::resolve_model(p) };
            must_exist(f, &found, "train the models (`make train`) or point at models/*.onnx")?;
            *p = found;
        }
        for (f, endpoint) in [
            ("publisher.endpoint", self.publisher.as_ref().map(|p| &p.endpoint)),
            ("backend.endpoint", self.backend.as_ref().map(|b| &b.endpoint)),
        ] {
            if let Some(e) = endpoint {
                if !["tcp://", "ipc://", "inproc://"].iter().any(|s| e.starts_with(s)) {
                    return Err(config_error(path, f, format!("{e:?}: a ZeroMQ address such as tcp://127.0.0.1:5560")));
                }
            }
        }
        for (f, curve) in [
            ("publisher.curve", self.publisher.as_mut().and_then(|p| p.curve.as_mut())),
            ("backend.curve", self.backend.as_mut().and_then(|b| b.curve.as_mut())),
        ] {
            if let Some(c) = curve {
                c.server_secret_key_file = resolve(&c.server_secret_key_file);
                must_exist(
                    &format!("{f}.server_secret_key_file"),
                    &c.server_secret_key_file,
                    "make keys with `tablecam keys`",
                )?;
                if let Some(d) = &mut c.authorized_clients_dir {
                    *d = resolve(d);
                    must_exist(&format!("{f}.authorized_clients_dir"), d, "a folder of client public keys")?;
                }
            }
        }
        match self.journal.fsync {
            FsyncSetting::EveryN(0) => {
                return Err(config_error(path, "journal.fsync", "every_n must be at least 1 (1 is \"always\")"))
            }
            FsyncSetting::IntervalMs(0) => {
                return Err(config_error(path, "journal.fsync", "interval_ms must be at least 1 (or use \"always\")"))
            }
            _ => {}
        }
        self.journal.dir = resolve(&self.journal.dir);
        if let Some(rec) = &mut self.recording {
            rec.dir = resolve(&rec.dir);
            if rec.jpeg_quality.is_some_and(|q| !(1..=100).contains(&q)) {
                return Err(config_error(path, "recording.jpeg_quality", "must be 1..=100 (92 is the default)"));
            }
            for (field, v) in
                [("recording.max_total_gb", rec.max_total_gb), ("recording.max_age_hours", rec.max_age_hours)]
            {
                if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                    return Err(config_error(path, field, "must be a positive number (leave it out for no limit)"));
                }
            }
        }
        if self.queue_capacity == 0 {
            return Err(config_error(path, "queue_capacity", "0: use at least 1 (8 is a good start)"));
        }
        Ok(ValidatedConfig { path: path.to_path_buf(), config: self, sources })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn good() -> serde_json::Value {
        serde_json::json!({
            "version": 1,
            "tables": [{
                "table_id": "T1",
                "source": "sim:fortune3cp-2025",
                "calibration": "../calibration/fortune3cp-2025.json",
                "ruleset": "fortune3cp-2025"
            }],
            "recognizer": {"locator": "../models/fixtures/locator_tiny.onnx", "classifier": "../models/fixtures/classifier_tiny.onnx"},
            "journal": {"dir": "../var/journal-test"}
        })
    }

    fn check(v: &serde_json::Value) -> Result<ValidatedConfig, PipelineError> {
        let path = root().join("config/test.json");
        RunConfig::parse(&v.to_string(), &path)?.validate(&path)
    }

    fn field_of(e: PipelineError) -> (String, String) {
        match e {
            PipelineError::Config { field, message, path } => {
                assert!(path.ends_with("config/test.json"));
                (field, message)
            }
            other => panic!("not a config error: {other}"),
        }
    }

    #[test]
    fn a_good_file_validates_with_defaults() {
        let v = check(&good()).expect("valid");
        assert_eq!(v.config.health_interval_ms, 5000);
        assert_eq!(v.config.journal.fsync, FsyncSetting::Always);
        assert_eq!(v.sources, vec![SourceSpec::Sim(RulesetId::Fortune3cp2025)]);
        assert!(v.config.tables[0].calibration.exists());
        assert_eq!(v.config.tables[0].deck, None, "no deck named: none enrolled");
        let mut g = good();
        g["tables"][0]["deck"] = "kde-standard".into();
        assert_eq!(check(&g).expect("valid").config.tables[0].deck.as_deref(), Some("kde-standard"));
    }

    #[test]
    fn recording_options_follow_the_file() {
        let mut g = good();
        g["recording"] = serde_json::json!({"dir": "rec", "jpeg_quality": 80, "max_total_gb": 1.5, "max_age_hours": 2});
        let v = check(&g).expect("valid");
        let o = v.config.recording.as_ref().expect("recording").options();
        assert_eq!(o.jpeg_quality, 80);
        assert_eq!(o.retention.max_total_bytes, Some(1_500_000_000));
        assert_eq!(o.retention.max_age, Some(std::time::Duration::from_secs(7200)));
        assert_eq!(o.segment_max_frames, RecordingOptions::default().segment_max_frames);
    }

    #[test]
    fn errors_name_the_field() {
        // An edit of the good file, the field the error must name, words of its message.
        type Case = (Box<dyn Fn(&mut serde_json::Value)>, &'static str, &'static str);
        let cases: Vec<Case> = vec![
            (Box::new(|v| v["version"] = 2.into()), "version", "not supported"),
            (Box::new(|v| v["tables"][0]["colour"] = "red".into()), "tables[0]", "unknown field `colour`"),
            (Box::new(|v| v["tables"][0]["ruleset"] = "stud-2004".into()), "tables[0].ruleset", "calibration"),
            (Box::new(|v| v["tables"][0]["ruleset"] = "poker".into()), "tables[0]", "unknown variant"),
            (Box::new(|v| v["tables"][0]["table_id"] = "T 1".into()), "tables[0].table_id", "letters"),
            (
                Box::new(|v| v["tables"][0]["calibration"] = "nope.json".into()),
                "tables[0].calibration",
                "does not exist",
            ),
            (Box::new(|v| v["recognizer"]["workers"] = 0.into()), "recognizer.workers", "1 to"),
            (Box::new(|v| v["recognizer"]["threads"] = 2.into()), "recognizer", "unknown field `threads`"),
            (Box::new(|v| v["journal"]["fsync"] = serde_json::json!({"every_n": 0})), "journal.fsync", "at least 1"),
            (
                Box::new(|v| v["publisher"] = serde_json::json!({"endpoint": "localhost:1"})),
                "publisher.endpoint",
                "tcp://",
            ),
            (Box::new(|v| v["speed"] = 2.into()), "(top level)", "unknown field `speed`"),
            (
                Box::new(|v| v["recording"] = serde_json::json!({"dir": "rec", "jpeg_quality": 0})),
                "recording.jpeg_quality",
                "1..=100",
            ),
            (
                Box::new(|v| v["recording"] = serde_json::json!({"dir": "rec", "max_age_hours": -1})),
                "recording.max_age_hours",
                "positive",
            ),
            (Box::new(|v| v["recording"] = serde_json::json!({"path": "rec"})), "recording", "unknown field `path`"),
        ];
        for (edit, field, message) in cases {
            let mut v = good();
            edit(&mut v);
            let (f, m) = field_of(check(&v).expect_err(field));
            assert_eq!(f, field, "{m}");
            assert!(m.contains(message), "{field}: {m}");
        }
    }
}
