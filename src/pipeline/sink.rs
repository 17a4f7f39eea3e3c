//! Sinks that need nothing outside the pipeline: an in-memory collector (tests, evaluation)
//! and JSON-lines files, one per table.
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::contract::{EventSink, SerializedEvent};
use super::PipelineError;

/// Keeps every event in memory; clone it before handing it to the pipeline to read them after.
#[derive(Debug, Clone, Default)]
pub struct Collector {
    events: Arc<Mutex<Vec<SerializedEvent>>>,
}

impl Collector {
    /// An empty collector.
    pub fn new() -> Collector {
        Collector::default()
    }

    /// Every event so far, in the order the sink took them (each table's in its own order).
    pub fn events(&self) -> Vec<SerializedEvent> {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// One table's events.
    pub fn table(&self, table_id: &str) -> Vec<SerializedEvent> {
        self.events().into_iter().filter(|e| &*e.table_id == table_id).collect()
    }

    /// One table's events as JSON lines, without the [volatile](SerializedEvent::volatile)
    /// ones: the stream that must be byte-identical for the same input.
    pub fn deterministic_stream(&self, table_id: &str) -> String {
        let mut s = String::new();
        for e in self.table(table_id).into_iter().filter(|e| !e.volatile) {
            s.push_str(&e.json);
            s.push('\n');
        }
        s
    }
}

impl EventSink for Collector {
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError> {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(event.clone());
        Ok(())
    }

    fn close(&mut self) -> Result<(), PipelineError> {
        Ok(())
    }
}

/// Writes each table's events to `DIR/<table>.jsonl`, one JSON line each, flushed on close.
/// No hash chain and no fsync: the journal of `crate::record` is the durable one.
#[derive(Debug)]
pub struct JsonLinesSink {
    dir: PathBuf,
    files: BTreeMap<Arc<str>, (PathBuf, BufWriter<File>)>,
}

impl JsonLinesSink {
    /// Creates `dir` if needed; files are created on each table's first event.
    pub fn create(dir: &Path) -> Result<JsonLinesSink, PipelineError> {
        std::fs::create_dir_all(dir).map_err(|source| PipelineError::Io { path: dir.to_path_buf(), source })?;
        Ok(JsonLinesSink { dir: dir.to_path_buf(), files: BTreeMap::new() })
    }
}

impl EventSink for JsonLinesSink {
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError> {
        if !self.files.contains_key(&event.table_id) {
            let path = self.dir.join(format!("{}.jsonl", event.table_id));
            let file = File::create(&path).map_err(|source| PipelineError::Io { path: path.clone(), source })?;
            self.files.insert(event.table_id.clone(), (path, BufWriter::new(file)));
        }
        if let Some((path, w)) = self.files.get_mut(&event.table_id) {
            writeln!(w, "{}", event.json).map_err(|source| PipelineError::Io { path: path.clone(), source })?;
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), PipelineError> {
        for (path, w) in self.files.values_mut() {
            w.flush().map_err(|source| PipelineError::Io { path: path.clone(), source })?;
        }
        Ok(())
    }
}

/// Prints each event's readable line (outcomes, flags) as it passes, then hands it on.
pub struct PrintingSink<S: EventSink> {
    inner: S,
    out: Box<dyn Write + Send>,
    /// Every event's JSON line rather than the readable lines.
    json: bool,
}

impl<S: EventSink> PrintingSink<S> {
    /// Prints readable lines to `out` (e.g. stdout) in front of `inner`.
    pub fn new(inner: S, out: Box<dyn Write + Send>) -> PrintingSink<S> {
        PrintingSink { inner, out, json: false }
    }

    /// Prints every event's JSON line to `out` in front of `inner`.
    pub fn json(inner: S, out: Box<dyn Write + Send>) -> PrintingSink<S> {
        PrintingSink { inner, out, json: true }
    }
}

impl<S: EventSink> EventSink for PrintingSink<S> {
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError> {
        // Journal (and publish) first: the terminal shows what is on record.
        self.inner.accept(event)?;
        let line = if self.json { Some(&event.json) } else { event.text.as_ref() };
        if let Some(text) = line {
            // A closed terminal (`| head`) must not stop the journal.
            let _ = writeln!(self.out, "{text}");
            let _ = self.out.flush();
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), PipelineError> {
        self.inner.close()
    }
}
