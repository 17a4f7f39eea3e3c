#!/usr/bin/env python3
"""Replays the per-frame readings of simulator sessions through the tracker's identity rules, to
choose (or re-check) the rule for enrolled decks (docs/pipeline.md, "Enrolled decks").

    tablecam eval-recognition --session SESSION --every 1 --out OUT     # per session
    python3 scripts/identity_fusion.py --enrolled DESIGN,DESIGN,... OUT [OUT ...]

Each OUT is an `eval-recognition --session` folder: `reads.jsonl` (every visible face-up card of
every frame and what was read on it) and `report.json` (which names the session, whose
`session.json` names the deck design). A card is one (session, round, card) sequence; it counts
as identified the first frame a rule confirms it. Two rules, as `src/track` applies them:

- named: 3 reads the classifier named (>= its threshold, 0.999) holding 80 % of the named reads;
- unsure (enrolled decks only): the reading holding `--agreement` of all readings >= 0.5, read at
  >= P in K frames, and no named read of another card.

The tracker also skips frames in which the card moves; this replay does not, so it is a little
generous to both rules alike. Sessions read every n-th frame give one reading per n frames:
compare K with that in mind.
"""
import argparse
import collections
import json
import os

NAMED_THRESHOLD, NAMED_VOTES, NAMED_SHARE, FLOOR = 0.999, 3, 0.8, 0.5


def load(out_dirs, enrolled):
    cards = {True: collections.defaultdict(list), False: collections.defaultdict(list)}
    for out in out_dirs:
        with open(os.path.join(out, "report.json")) as f:
            session = json.load(f)["sim"]["dataset"]
        with open(os.path.join(session, "session.json")) as f:
            design = json.load(f)["design"]
        group = cards[design in enrolled]
        with open(os.path.join(out, "reads.jsonl")) as f:
            for line in f:
                j = json.loads(line)
                r = j["read"]
                group[(session, j["round"], r["truth"])].append(
                    (j["frame"], r["card"], r["reading"], r["confidence"]))
    return cards


def replay(cards, sure, votes, agreement):
    """(right, wrong, unidentified, wrong cases); `votes` 0: the named rule alone."""
    right = wrong = none = 0
    cases = []
    for key, seq in cards.items():
        named, readings, sure_n, got = collections.Counter(), collections.Counter(), collections.Counter(), None
        for _, card, reading, conf in sorted(seq, key=lambda x: x[0]):
            if card not in (None, "unknown", "back") and conf >= NAMED_THRESHOLD:
                named[card] += 1
            if reading and conf >= FLOOR:
                readings[reading] += 1
                if conf >= sure:
                    sure_n[reading] += 1
            if named:
                c, n = named.most_common(1)[0]
                if n >= NAMED_VOTES and n >= NAMED_SHARE * sum(named.values()):
                    got = c
                    break
            if votes and readings:
                c, n = readings.most_common(1)[0]
                if sure_n[c] >= votes and n >= agreement * sum(readings.values()) and all(k == c for k in named):
                    got = c
                    break
        if got is None:
            none += 1
        elif got == key[2]:
            right += 1
        else:
            wrong += 1
            cases.append(f"{os.path.basename(key[0])} round {key[1]}: {key[2]} read as {got}")
    return right, wrong, none, cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="+", help="eval-recognition --session output folders")
    ap.add_argument("--enrolled", default="", help="the classifier's training designs (its tablecam.designs)")
    ap.add_argument("--sure", default="0.9,0.95,0.98,0.99", help="reading probabilities P to try")
    ap.add_argument("--votes", default="8,12,20,30", help="frame counts K to try")
    ap.add_argument("--agreement", type=float, default=0.8)
    args = ap.parse_args()
    enrolled = {d.strip() for d in args.enrolled.split(",") if d.strip()}
    cards = load(args.out, enrolled)
    for group, name in ((True, "enrolled decks"), (False, "unseen decks")):
        if not cards[group]:
            continue
        r, w, n, _ = replay(cards[group], 1.0, 0, args.agreement)
        print(f"{name}: {len(cards[group])} cards; named reads alone: {r} right, {w} wrong, {n} unidentified")
        for sure in (float(v) for v in args.sure.split(",")):
            for votes in (int(v) for v in args.votes.split(",")):
                r, w, n, cases = replay(cards[group], sure, votes, args.agreement)
                print(f"  P {sure:.2f} K {votes:3d}: {r} right, {w} wrong, {n} unidentified"
                      + (f"  ({'; '.join(cases[:3])})" if cases else ""))


if __name__ == "__main__":
    main()
