"""LoCoMo (snap-research/LoCoMo, data/locomo10.json) read into turns and questions for bench/locomo.py.

The data is CC BY-NC 4.0: it is never copied into this repository; the bench reads it from the path in
MAESTRO_LOCOMO (or --data) and skips when it is absent.
"""

import datetime
import json
import re

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# Evidence ids as written ('D1:3'), and the few malformed ones in the file ('D:11:26', 'D8:6; D9:17').
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def _stamp(session_time: str) -> str:
    """'1:56 pm on 8 May, 2023' → '2023-05-08 13:56'."""
    moment = datetime.datetime.strptime(session_time.replace(",", ""), "%I:%M %p on %d %B %Y")
    return f"{moment:%Y-%m-%d %H:%M}"


def turn_text(turn: dict, captions: bool) -> str:
    """The entry body of one turn: 'Speaker: text', and the photo it shares when `captions`."""
    text = f"{turn['speaker']}: {turn['text']}"
    if captions and turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return " ".join(text.split())


def load(path: str, captions: bool = True) -> list:
    """[{'sample_id', 'turns': [(dia_id, stamp, body)], 'questions': [(question, category, {dia_id})]}]:
    categories 1–4 only (5 is adversarial: no answer in the conversation), questions without a
    resolvable evidence turn left out."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    out = []
    for sample in data:
        conversation = sample["conversation"]
        turns = []
        number = 1
        while f"session_{number}" in conversation:
            stamp = _stamp(conversation[f"session_{number}_date_time"])
            for turn in conversation[f"session_{number}"]:
                turns.append((turn["dia_id"], stamp, turn_text(turn, captions)))
            number += 1
        known = {dia_id for dia_id, _, _ in turns}
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            gold = {f"D{s}:{t}" for item in qa["evidence"] for s, t in _EVIDENCE.findall(item)} & known
            if gold:
                questions.append((qa["question"], qa["category"], gold))
        out.append({"sample_id": sample["sample_id"], "turns": turns, "questions": questions})
    return out
