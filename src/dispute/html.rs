//! The evidence pack's `index.html`: one self-contained page (inline CSS, a few lines of inline
//! script that only measure the pictures, key frames as JPEG files beside it, no external URL).
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{models_text, EventsFrom, KeyFrame, Recorded};
use crate::events::{CardSeen, EventBody, RoundOutcome, VerificationStatus};
use crate::record::recording::ModelsUsed;
use crate::replay::Session;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#111;max-width:1400px}\
h1{font-size:1.5em}h2{border-bottom:2px solid #333;margin-top:2em}\
table{border-collapse:collapse;width:100%}td,th{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top}\
th{background:#eee}.flag td{background:#fff3f0}.verified{color:#060;font-weight:bold}.unverified{color:#b00;font-weight:bold}\
code{font-size:12px;word-break:break-all}figure{margin:1em 0;border:1px solid #ccc;padding:6px}\
figure img{max-width:100%}.kind{font-family:monospace}";

/// Records, on load, each picture's natural width (and how many loaded) in the DOM, so that a
/// headless browser's DOM dump shows that the pictures are there and decode.
const SCRIPT: &str = "window.addEventListener('load',function(){var n=0;\
document.querySelectorAll('img').forEach(function(i){i.setAttribute('data-natural-width',i.naturalWidth);\
if(i.naturalWidth>0)n++;});document.body.setAttribute('data-images-loaded',n);});";

/// Escapes text for HTML.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub(super) struct Page<'a> {
    pub session: &'a Session,
    pub round_id: &'a str,
    pub events: &'a [Recorded],
    pub key_frames: &'a BTreeMap<u64, KeyFrame>,
    pub outcome: Option<&'a RoundOutcome>,
    pub events_from: &'a EventsFrom,
    pub models: &'a ModelsUsed,
}

fn cards(cards: &[CardSeen]) -> String {
    let v: Vec<String> = cards
        .iter()
        .map(|c| match (c.card, c.rank) {
            (Some(card), _) => card.code(),
            (None, Some(rank)) => format!("{}? (#{}: rank read, suit not)", rank.code(), c.track),
            (None, None) => format!("#{} (not read)", c.track),
        })
        .collect();
    if v.is_empty() {
        "—".into()
    } else {
        v.join(" ")
    }
}

/// An event's details in a few words.
fn details(body: &EventBody) -> String {
    let card = |c: &Option<crate::rules::Card>| c.map(|c| c.code()).unwrap_or_else(|| "unidentified".into());
    match body {
        EventBody::RoundStarted { seats_with_bets, source, .. } => {
            format!("round started ({source}); bets at seats {seats_with_bets:?}")
        }
        EventBody::CardDealt { track, zone, order, face_up, card: c } => format!(
            "card #{track} dealt to {zone} (#{order} there), face {}, {}",
            if *face_up { "up" } else { "down" },
            card(c)
        ),
        EventBody::CardTurned { track, zone, face_up, card: c } => {
            format!("card #{track} in {zone} turned face {}, {}", if *face_up { "up" } else { "down" }, card(c))
        }
        EventBody::CardIdentified { track, zone, card: c, previous, corrects } => format!(
            "card #{track}{} identified as {}{}",
            zone.map(|z| format!(" in {z}")).unwrap_or_default(),
            c.code(),
            previous
                .map(|p| if *corrects {
                    format!(" (corrects a misread: {})", p.code())
                } else {
                    format!(" (was {})", p.code())
                })
                .unwrap_or_default()
        ),
        EventBody::CardMoved { track, from, to } => format!("card #{track} moved {from} → {to}"),
        EventBody::CardRemoved { track, from, card: c } => format!(
            "card #{track} left the table{} ({})",
            from.map(|z| format!(" from {z}")).unwrap_or_default(),
            card(c)
        ),
        EventBody::RoundState { from, to, reason } => format!("{} → {}: {reason}", from.as_str(), to.as_str()),
        EventBody::RoundFlag(f) => format!(
            "FLAG #{} {:?}{}: {} — {}",
            f.flag_id,
            f.irregularity,
            f.seat.map(|s| format!(" seat {s}")).unwrap_or_default(),
            f.citation,
            f.detail
        ),
        EventBody::RoundOutcome(o) => format!(
            "outcome: {}, {}",
            o.status,
            match o.verification.status {
                VerificationStatus::Verified => "verified",
                VerificationStatus::Unverified => "unverified",
            }
        ),
        EventBody::Health { .. } => "pipeline counters".into(),
        EventBody::BackendHint(h) => format!("backend: {}", serde_json::to_string(h).unwrap_or_default()),
        EventBody::Error { source, message } => format!("error ({source}): {message}"),
    }
}

impl Page<'_> {
    pub fn render(&self) -> String {
        let mut h = String::new();
        let s = self.session;
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Evidence pack: {} round {}</title>\
<style>{STYLE}</style><script>{SCRIPT}</script></head><body>\n",
            esc(&s.table_id),
            esc(self.round_id)
        );
        let _ = write!(
            h,
            "<h1>Evidence pack — table {}, round <span id=\"round-id\">{}</span></h1>\n<table>\
<tr><th>ruleset</th><td>{}</td></tr><tr><th>camera</th><td>{}</td></tr><tr><th>session</th><td><code>{}</code></td></tr>\
<tr><th>events from</th><td id=\"events-from\">{}</td></tr><tr><th>key frames recognized with</th><td><code>{}</code></td></tr></table>\n",
            esc(&s.table_id),
            esc(self.round_id),
            esc(&s.ruleset.to_string()),
            esc(&s.camera_id),
            esc(&s.dir.display().to_string()),
            match self.events_from {
                EventsFrom::Journal { path, .. } => format!("the journal <code>{}</code> (verified below)", esc(&path.display().to_string())),
                EventsFrom::Replay => "a replay of the session: it has no journal, so there is no tamper-evident record".into(),
            },
            esc(&models_text(self.models)),
        );
        self.verification(&mut h);
        self.outcome_section(&mut h);
        self.flags(&mut h);
        self.journal(&mut h);
        self.timeline(&mut h);
        self.frames(&mut h);
        h.push_str("</body></html>\n");
        h
    }

    fn verification(&self, h: &mut String) {
        h.push_str("<h2>Verification</h2>\n<div id=\"verification\">");
        match self.outcome {
            Some(o) => {
                let (class, word) = match o.verification.status {
                    VerificationStatus::Verified => ("verified", "VERIFIED"),
                    VerificationStatus::Unverified => ("unverified", "UNVERIFIED"),
                };
                let _ = write!(h, "<p>Status: <span class=\"{class}\" id=\"verification-status\">{word}</span></p>");
                if o.verification.reasons.is_empty() {
                    h.push_str("<p>Every deciding card was confirmed face up and every decision was seen or told.</p>");
                } else {
                    h.push_str("<p>Reasons:</p><ul>");
                    for r in &o.verification.reasons {
                        let _ = write!(h, "<li class=\"reason\">{}</li>", esc(r));
                    }
                    h.push_str("</ul>");
                }
            }
            None => h.push_str(
                "<p>Status: <span class=\"unverified\" id=\"verification-status\">NO OUTCOME</span></p>\
<p>The round has no outcome event: it did not finish within the session.</p>",
            ),
        }
        h.push_str("</div>\n");
    }

    fn outcome_section(&self, h: &mut String) {
        h.push_str("<h2>Hands and outcome per bet</h2>\n<div id=\"outcome\">");
        let Some(o) = self.outcome else {
            h.push_str("<p>No outcome.</p></div>\n");
            return;
        };
        let _ = write!(h, "<p>Round status: <b>{}</b>", esc(&o.status));
        if let Some(c) = &o.void_citation {
            let _ = write!(h, " — void under {}", esc(c));
        }
        h.push_str("</p>");
        let q = match o.dealer_qualifies {
            Some(true) => " (qualifies)",
            Some(false) => " (does not qualify)",
            None => "",
        };
        let _ = write!(h, "<p>Dealer: {} — {}{q}</p>", esc(&cards(&o.dealer)), esc(&o.dealer_hand));
        if !o.community.is_empty() {
            let _ = write!(h, "<p>Community: {}</p>", esc(&cards(&o.community)));
        }
        h.push_str(
            "<table id=\"hands\"><tr><th>seat</th><th>cards</th><th>hand</th><th>decision</th><th>bet</th>\
<th>result</th><th>net (× stake)</th><th>stake / net amount</th><th>articles</th></tr>",
        );
        for hand in &o.hands {
            let rows = hand.bets.len().max(1);
            let first = format!(
                "<td rowspan=\"{rows}\">{}</td><td rowspan=\"{rows}\">{}</td><td rowspan=\"{rows}\">{}{}</td><td rowspan=\"{rows}\">{}</td>",
                hand.seat,
                esc(&cards(&hand.cards)),
                esc(&hand.hand),
                hand.null.as_ref().map(|n| format!(" (null: {})", esc(n))).unwrap_or_default(),
                esc(&format!("{:?}", hand.decision).to_lowercase())
            );
            if hand.bets.is_empty() {
                let _ = write!(h, "<tr class=\"hand\">{first}<td colspan=\"5\">no bet seen</td></tr>");
            }
            for (i, b) in hand.bets.iter().enumerate() {
                let money = match (&b.stake, &b.net_amount) {
                    (Some(s), Some(n)) => format!("{} / {}", json_text(s), json_text(n)),
                    _ => "not told".into(),
                };
                let _ = write!(
                    h,
                    "<tr class=\"bet\">{}<td>{}</td><td>{}</td><td class=\"payout\">{:+}</td><td>{}</td><td>{}</td></tr>",
                    if i == 0 { first.as_str() } else { "" },
                    esc(&format!("{:?}", b.bet)),
                    esc(&b.outcome),
                    b.net_multiple,
                    esc(&money),
                    esc(&b.citations.join("; "))
                );
            }
        }
        h.push_str("</table>");
        if !o.folds.is_empty() {
            let _ = write!(h, "<p>Folded: seats {:?}</p>", o.folds);
        }
        if let Some(prev) = o.supersedes {
            let _ = write!(h, "<p>This outcome corrects the outcome event seq {prev}.</p>");
        }
        h.push_str("</div>\n");
    }

    fn flags(&self, h: &mut String) {
        h.push_str("<h2>Flags</h2>\n<div id=\"flags\">");
        let flags: Vec<_> = self
            .events
            .iter()
            .filter_map(|r| match &r.event.body {
                EventBody::RoundFlag(f) => Some((r, f)),
                _ => None,
            })
            .collect();
        if flags.is_empty() {
            h.push_str("<p id=\"no-flags\">No irregularity was flagged in this round.</p></div>\n");
            return;
        }
        h.push_str(
            "<table><tr><th>#</th><th>irregularity</th><th>seat</th><th>article</th><th>consequence</th>\
<th>what was seen</th><th>evidence</th></tr>",
        );
        for (r, f) in flags {
            let _ = write!(
                h,
                "<tr class=\"flag\"><td>{}{}</td><td>{}</td><td>{}</td><td class=\"citation\">{}</td><td>{}</td><td>{}</td>\
<td><a href=\"#frame-{}\">frame {}</a> (event seq {})</td></tr>",
                f.flag_id,
                f.supersedes_flag.map(|s| format!(" (replaces #{s})")).unwrap_or_default(),
                esc(&format!("{:?}", f.irregularity)),
                f.seat.map(|s| s.to_string()).unwrap_or_else(|| "—".into()),
                esc(&f.citation),
                esc(&consequence_text(&f.consequence)),
                esc(&f.detail),
                f.evidence_frame,
                f.evidence_frame,
                r.event.seq
            );
        }
        h.push_str("</table></div>\n");
    }

    fn journal(&self, h: &mut String) {
        h.push_str("<h2>Record integrity</h2>\n<div id=\"journal\">");
        match self.events_from {
            EventsFrom::Journal { path, report } => {
                let last = self.events.iter().rev().find_map(|r| r.entry.clone());
                let _ = write!(
                    h,
                    "<p>Journal <code>{}</code>: hash chain verified, <span id=\"journal-result\">intact</span>: \
{} entries, chain head (hash of the last entry) <code id=\"chain-head\">{}</code>.</p>",
                    esc(&path.display().to_string()),
                    report.entries,
                    report.last_hash
                );
                if let Some((n, hash)) = last {
                    let _ = write!(
                        h,
                        "<p>The last entry of this round is entry {n}, SHA-256 <code id=\"round-hash\">{}</code>. \
Every entry's hash covers the previous entry's hash, so no event of this round can have been changed, removed or \
inserted without breaking the chain. Check it with <code>tablecam journal verify {}</code>.</p>",
                        esc(&hash),
                        esc(&path.display().to_string())
                    );
                }
            }
            EventsFrom::Replay => h.push_str(
                "<p><span id=\"journal-result\">no journal</span>: the events were recomputed by replaying the \
session; they carry no hash chain.</p>",
            ),
        }
        h.push_str("</div>\n");
    }

    fn timeline(&self, h: &mut String) {
        h.push_str(
            "<h2>Timeline</h2>\n<table id=\"timeline\"><tr><th>seq</th><th>frame</th><th>time (s)</th><th>kind</th>\
<th>details</th><th>journal entry</th></tr>",
        );
        for r in self.events {
            let e = &r.event;
            let class = if matches!(e.body, EventBody::RoundFlag(_)) { "event flag" } else { "event" };
            let _ = write!(
                h,
                "<tr class=\"{class}\"><td>{}</td><td><a href=\"#frame-{}\">{}</a></td><td>{:.3}</td><td class=\"kind\">{}</td>\
<td>{}</td><td>{}</td></tr>",
                e.seq,
                e.frame,
                e.frame,
                e.time_ms / 1000.0,
                e.kind(),
                esc(&details(&e.body)),
                r.entry.as_ref().map(|(n, _)| n.to_string()).unwrap_or_else(|| "—".into())
            );
        }
        h.push_str("</table>\n");
    }

    fn frames(&self, h: &mut String) {
        h.push_str(
            "<h2>Key frames</h2>\n<p>Each frame as the live recognizer saw it, recognized again: every card's outline, \
identity, confidence and zone (green: identified face; amber: unknown; blue: back), over the calibration's zones.</p>\n",
        );
        for k in self.key_frames.values() {
            let kinds: Vec<&str> =
                self.events.iter().filter(|r| r.event.frame == k.frame).map(|r| r.event.kind()).collect();
            let time = self.events.iter().find(|r| r.event.frame == k.frame).map(|r| r.event.time_ms / 1000.0);
            let cards: Vec<String> = k
                .cards
                .iter()
                .map(|c| {
                    format!(
                        "{} ({:.2}, face {}, {})",
                        c.identity,
                        c.confidence,
                        if c.face_up { "up" } else { "down" },
                        c.zone
                    )
                })
                .collect();
            let _ = writeln!(
                h,
                "<figure id=\"frame-{}\"><img class=\"keyframe\" src=\"{}\" alt=\"frame {}\">\
<figcaption>frame {}{}; events: {}; cards: {}</figcaption></figure>",
                k.frame,
                esc(&k.file),
                k.frame,
                k.frame,
                time.map(|t| format!(" at {t:.3} s")).unwrap_or_default(),
                esc(&if kinds.is_empty() { "flag evidence".to_string() } else { kinds.join(", ") }),
                esc(&if cards.is_empty() { "none recognized".to_string() } else { cards.join("; ") })
            );
        }
    }
}

fn json_text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// A flag's consequence (`{"kind": "round_void", …}`) in words: the kind, then the other fields.
fn consequence_text(v: &serde_json::Value) -> String {
    match v.as_object() {
        Some(map) => {
            let kind = map.get("kind").and_then(|k| k.as_str()).unwrap_or("?").replace('_', " ");
            let rest: Vec<String> =
                map.iter().filter(|(k, _)| k.as_str() != "kind").map(|(k, v)| format!("{k}: {v}")).collect();
            if rest.is_empty() {
                kind
            } else {
                format!("{kind} ({})", rest.join(", "))
            }
        }
        None => v.to_string(),
    }
}
