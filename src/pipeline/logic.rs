//! The real table logic: [`TableMonitor`] (tracker + verifier) behind [`TableLogic`], with the
//! table's [`Sequencer`] and the readable lines `tablecam run` prints.
use std::sync::Arc;

use opencv::prelude::*;

use super::contract::{HealthReport, ObservedFrame, SerializedEvent, TableHint, TableLogic, TableSetup};
use super::PipelineError;
use crate::events::{Event, EventBody, RoundFlag, RoundOutcome, Sequencer, StageHealth};
use crate::recognize::twins::PrintBook;
use crate::recognize::{CardIdentity, DetectedCard, TwinPrint};
use crate::rules::Ruleset;
use crate::source::HealthEvent;
use crate::track::{CardObservation, FrameObservations, ObservedFace, SpotPresence, TrackerOptions};
use crate::verify::{TableMonitor, VerifierOptions};

/// One table's tracker and verifier, numbering its events.
pub struct MonitorLogic {
    monitor: TableMonitor,
    sequencer: Sequencer,
    table_id: Arc<str>,
    camera_id: String,
    /// The last frame seen (number, ms): events not caused by a frame carry it.
    last: (u64, f64),
    /// Refused backend messages, reported with the frame they arrived before (as accepted
    /// ones are echoed), so that a replay can put them back at the same place.
    refused: Vec<String>,
    /// The prints of the faces read this round, so that a misread twin is caught when the card
    /// it seems to duplicate has left the table ([`PrintBook`]).
    prints: PrintBook,
}

impl MonitorLogic {
    /// The logic of one table with the default tracker (for its deck) and verifier options.
    pub fn new(setup: &TableSetup<'_>) -> Result<MonitorLogic, PipelineError> {
        let monitor = TableMonitor::new(
            Ruleset::new(setup.ruleset),
            setup.geometry,
            TrackerOptions::for_deck(setup.deck_enrolled),
            VerifierOptions::new(setup.table_id, setup.camera_id),
        )
        .map_err(|e| PipelineError::stage("track", e))?;
        Ok(MonitorLogic {
            monitor,
            sequencer: Sequencer::new(),
            table_id: Arc::from(setup.table_id),
            camera_id: setup.camera_id.to_string(),
            last: (0, 0.0),
            refused: Vec::new(),
            prints: PrintBook::new(),
        })
    }

    /// A [`LogicFactory`](super::LogicFactory) of it.
    pub fn factory(setup: &TableSetup<'_>) -> Result<Box<dyn TableLogic>, PipelineError> {
        Ok(Box::new(MonitorLogic::new(setup)?))
    }

    fn emit(&mut self, mut event: Event, volatile: bool, out: &mut Vec<SerializedEvent>) {
        self.sequencer.stamp(&mut event);
        let text = readable(&event);
        out.push(SerializedEvent {
            table_id: self.table_id.clone(),
            kind: event.kind().to_string(),
            topic: event.topic(),
            seq: event.seq,
            frame: event.frame,
            time_ms: event.time_ms,
            json: event.to_json(),
            text,
            volatile,
        });
    }

    fn report_refused(&mut self, out: &mut Vec<SerializedEvent>) {
        for message in std::mem::take(&mut self.refused) {
            let e = self.envelope(EventBody::Error { source: "backend".into(), message });
            self.emit(e, false, out);
        }
    }

    fn envelope(&self, body: EventBody) -> Event {
        Event {
            table_id: self.table_id.to_string(),
            camera_id: self.camera_id.clone(),
            round_id: None,
            seq: 0,
            frame: self.last.0,
            time_ms: self.last.1,
            body,
        }
    }
}

/// The tracker's view of a detection.
pub fn observation(card: &DetectedCard) -> CardObservation {
    CardObservation {
        face: match card.card {
            // a face another card of the frame is read as too: see recognize::twins
            CardIdentity::Card(c) if card.twin == TwinPrint::Differs => ObservedFace::Contested(c),
            CardIdentity::Card(c) if card.twin == TwinPrint::Hidden => ObservedFace::Unsure(c),
            CardIdentity::Card(c) => ObservedFace::Card(c),
            CardIdentity::Back => ObservedFace::Back,
            CardIdentity::Unknown => card.reading.map_or(ObservedFace::Unknown, ObservedFace::Unsure),
        },
        confidence: card.confidence,
        face_up: card.face_up,
        quad: card.quad,
        // a print another card disputes is no rank read either (the twin's misread may be the rank)
        rank: card.rank.filter(|_| card.twin != TwinPrint::Differs),
    }
}

/// The tracker's input for one observed frame.
pub fn frame_observations(frame: &ObservedFrame) -> FrameObservations {
    observations_with(frame, &frame.cards)
}

/// [`frame_observations`] with the frame's cards as later checks left them.
fn observations_with(frame: &ObservedFrame, cards: &[DetectedCard]) -> FrameObservations {
    FrameObservations {
        frame: frame.frame,
        time_ms: frame.timestamp_ms,
        cards: cards.iter().map(observation).collect(),
        spots: frame
            .spots
            .iter()
            .flatten()
            .filter(|s| s.present)
            .map(|s| SpotPresence { seat: s.seat, bet: s.bet })
            .collect(),
        changes: frame.changes.clone(),
    }
}

impl TableLogic for MonitorLogic {
    fn frame(&mut self, frame: &ObservedFrame, out: &mut Vec<SerializedEvent>) -> Result<(), PipelineError> {
        self.last = (frame.frame, frame.timestamp_ms);
        self.report_refused(out);
        let mut cards = frame.cards.clone();
        // A replayed or synthetic frame may come without its image: its cards keep their twins.
        if !frame.image.empty() {
            if let Err(e) = self.prints.sight(&frame.image, frame.frame, &mut cards) {
                // The frame is still tracked, with the twins the recognizer found: reported,
                // not dropped.
                cards = frame.cards.clone();
                let e =
                    self.envelope(EventBody::Error { source: "track".into(), message: format!("print check: {e}") });
                self.emit(e, false, out);
            }
        }
        for e in self.monitor.push(&observations_with(frame, &cards)) {
            if matches!(e.body, EventBody::RoundStarted { .. }) {
                self.prints.clear();
            }
            self.emit(e, false, out);
        }
        Ok(())
    }

    fn source_health(&mut self, event: &HealthEvent, out: &mut Vec<SerializedEvent>) {
        // NOT YET: the event schema has no source-health kind; the source's problems go out as
        // `error` events, its routine news (reconnected, final counters, end) is in the run's
        // report only.
        let message = match event {
            HealthEvent::Corrupt { position, frames, reason, .. } => {
                format!("{frames} frame(s) from {position} could not be decoded and were skipped: {reason}")
            }
            HealthEvent::Gap { expected, got, .. } => format!("frames {expected}..{got} are missing from the source"),
            HealthEvent::Disconnected { reason, .. } => format!("camera disconnected: {reason}"),
            HealthEvent::Failed { reason, .. } => format!("source failed, no more frames: {reason}"),
            _ => return,
        };
        let e = self.envelope(EventBody::Error { source: "source".into(), message });
        self.emit(e, false, out);
    }

    fn health(&mut self, report: &HealthReport, out: &mut Vec<SerializedEvent>) {
        let stages = report
            .stages
            .iter()
            .map(|s| StageHealth {
                stage: s.stage.as_str().to_string(),
                received: s.received,
                sent: s.sent,
                dropped: s.dropped,
                errors: s.errors,
                latency_ms_p50: s.latency_p50_ms.unwrap_or(0.0),
                latency_ms_p99: s.latency_p99_ms.unwrap_or(0.0),
            })
            .collect();
        let mut e = self.envelope(EventBody::Health { stages });
        (e.frame, e.time_ms) = (report.frame, report.timestamp_ms);
        self.emit(e, true, out);
    }

    fn hint(&mut self, hint: &TableHint, _out: &mut Vec<SerializedEvent>) {
        match hint {
            // The verifier echoes it as `backend.hint` with the frame it was applied at.
            TableHint::Hint(h) => self.monitor.hint(h.clone()),
            TableHint::Refused(message) => self.refused.push(message.clone()),
        }
    }

    fn finish(&mut self, out: &mut Vec<SerializedEvent>) -> Result<(), PipelineError> {
        self.report_refused(out);
        for e in self.monitor.finish() {
            self.emit(e, false, out);
        }
        Ok(())
    }
}

/// The line `tablecam run` prints for an event worth showing: flags, outcomes, round starts.
pub fn readable(e: &Event) -> Option<String> {
    let round = e.round_id.as_deref().unwrap_or("-");
    let head = format!("{} {:>8.1}s frame {:>6} {round}", e.table_id, e.time_ms / 1000.0, e.frame);
    match &e.body {
        EventBody::RoundStarted { seats_with_bets, .. } => {
            let seats: Vec<String> = seats_with_bets.iter().map(u8::to_string).collect();
            Some(format!("{head} round started (bets at seats {})", seats.join(" ")))
        }
        EventBody::RoundFlag(f) => Some(format!("{head} FLAG {}", flag_text(f))),
        EventBody::RoundOutcome(o) => Some(format!("{head} OUTCOME {}", outcome_text(o))),
        EventBody::Error { source, message } => Some(format!("{head} error ({source}): {message}")),
        _ => None,
    }
}

fn flag_text(f: &RoundFlag) -> String {
    let seat = f.seat.map(|s| format!(" seat {s}")).unwrap_or_default();
    let consequence = f.consequence.get("kind").and_then(|k| k.as_str()).unwrap_or("?");
    let replaces = f.supersedes_flag.map(|id| format!(" (replaces flag {id})")).unwrap_or_default();
    format!("#{} {:?}{seat} → {consequence}, {}: {}{replaces}", f.flag_id, f.irregularity, f.citation, f.detail)
}

fn outcome_text(o: &RoundOutcome) -> String {
    let mut s = format!("{} {:?}", o.status, o.verification.status).to_lowercase();
    if !o.verification.reasons.is_empty() {
        s += &format!(" ({})", o.verification.reasons.join("; "));
    }
    if !o.dealer_hand.is_empty() {
        let q = match o.dealer_qualifies {
            Some(true) => ", qualifies",
            Some(false) => ", does not qualify",
            None => "",
        };
        s += &format!("; dealer {}{q}", o.dealer_hand);
    }
    for h in &o.hands {
        let bets: Vec<String> =
            h.bets.iter().map(|b| format!("{:?} {} {:+}", b.bet, b.outcome, b.net_multiple)).collect();
        // An unsettled round has hands not read and bets not settled: say so rather than print
        // blanks.
        let hand = if h.hand.is_empty() { "not read" } else { h.hand.as_str() };
        let bets = if bets.is_empty() { "not settled".to_string() } else { bets.join(", ") };
        s += &format!("; seat {} {hand}: {bets}", h.seat);
    }
    if let Some(prev) = o.supersedes {
        s += &format!(" (corrects event {prev})");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{HandResult, VerificationStatus};
    use crate::rules::settle::Decision;
    use crate::rules::RulesetId;

    #[test]
    fn an_unnamed_card_reaches_the_tracker_with_the_reading_it_leans_to() {
        use crate::calib::Point;
        use crate::recognize::Source;
        let seven: crate::rules::Card = "7D".parse().unwrap();
        let det = |card: CardIdentity, reading| DetectedCard {
            card,
            confidence: 0.97,
            face_up: true,
            quad: [Point::new(0.0, 0.0); 4],
            index_boxes: vec![],
            source: Source::Card,
            reading,
            rank: None,
            twin: TwinPrint::Alone,
        };
        assert_eq!(observation(&det(CardIdentity::Unknown, Some(seven))).face, ObservedFace::Unsure(seven));
        assert_eq!(observation(&det(CardIdentity::Unknown, None)).face, ObservedFace::Unknown);
        assert_eq!(observation(&det(CardIdentity::Card(seven), Some(seven))).face, ObservedFace::Card(seven));
        assert_eq!(observation(&det(CardIdentity::Back, None)).face, ObservedFace::Back);
    }

    #[test]
    fn an_unsettled_outcome_says_what_was_not_read_instead_of_printing_blanks() {
        let mut o = RoundOutcome::blank(RulesetId::Fortune3cp2025, "unsettled", VerificationStatus::Unverified);
        o.hands = vec![HandResult {
            seat: 3,
            cards: vec![],
            hand: String::new(),
            decision: Decision::Played,
            null: None,
            bets: vec![],
        }];
        o.verification.reasons = vec!["seat 3 card 1 never seen face up".into()];
        assert_eq!(
            outcome_text(&o),
            "unsettled unverified (seat 3 card 1 never seen face up); seat 3 not read: not settled"
        );
    }
}
