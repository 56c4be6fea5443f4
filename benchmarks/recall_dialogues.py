"""Multi-session two-person conversations with known evidence turns, for ``bench_recall``.

Written without looking at how LCM ranks or summarizes: everyday chat between
two friends (plain words, names and places, no identifiers, paths or numbers
shaped for the extractive summarizer), with facts planted in it and a question
per fact worded the way a person asks later (paraphrased, sharing a word or
two with the evidence at most). Question kinds, as in long-conversation memory
benchmarks:

* ``single``: a fact stated once (sometimes as the answer to the other
  person's question, so the evidence is the turn after the one the question's
  words match);
* ``update``: a fact stated, then changed in a later session: only the latest
  statement is the evidence;
* ``multi``: the answer is spread over two sessions: both turns are evidence;
* ``when``: an event told as it happens ("this morning", "yesterday"): the
  answer is the message's date, the evidence its turn.

The filler around the facts talks about the same things (relatives, pets,
cities, sports, food) without the answers, so a question's words also match
turns that do not answer it.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

NAMES = ["Maya", "Jonas", "Priya", "Tomas", "Leila", "Oskar", "Nadia", "Felix", "Rosa", "Kenji", "Amara", "Luca"]
POOLS: dict[str, list[str]] = {
    "rel": ["sister", "brother", "cousin", "aunt", "uncle", "neighbour", "best friend", "roommate", "mum", "dad"],
    "pet": ["puppy", "kitten", "parrot", "rabbit", "hamster", "tortoise", "beagle", "terrier"],
    "petname": ["Pickles", "Biscuit", "Mango", "Pepper", "Noodle", "Juniper", "Waffles", "Ziggy", "Clementine",
                "Bramble", "Toffee", "Olive"],
    "city": ["Lisbon", "Kyoto", "Montreal", "Oaxaca", "Tallinn", "Hobart", "Valparaiso", "Bergen", "Ljubljana",
             "Cusco", "Porto", "Galway"],
    "instrument": ["cello", "ukulele", "banjo", "trumpet", "harp", "accordion", "clarinet", "mandolin"],
    "dish": ["mushroom risotto", "lamb tagine", "shakshuka", "pierogi", "green curry", "paella", "gumbo",
             "spanakopita"],
    "sport": ["bouldering", "rowing", "fencing", "archery", "pickleball", "kayaking", "squash", "ultimate frisbee"],
    "book": ["The Glass Orchard", "Salt and Cedar", "A Map of Small Hours", "The Quiet Harbour", "Winter Bees",
             "The Lantern Room", "Paper Tigers of June", "Under the Juniper"],
    "job": ["nurse", "carpenter", "translator", "pharmacist", "architect", "florist", "paramedic", "librarian",
            "sound engineer", "baker"],
    "car": ["a green Subaru", "an old Volvo wagon", "a red Mini", "a used Prius", "a white camper van",
            "a blue Fiat"],
    "place": ["Pine Ridge trail", "Eagle Point", "Miller Falls", "Heron Lake", "Copper Canyon", "Foxglove Hill"],
    "colour": ["sage green", "pale yellow", "dusty blue", "terracotta", "lavender", "warm grey"],
    "allergen": ["shellfish", "peanuts", "cats", "penicillin", "bee stings", "kiwi fruit"],
    "plant": ["sunflowers", "pumpkins", "courgettes", "raspberries", "sweet peas", "chillies"],
    "org": ["animal shelter", "food bank", "community library", "children's hospital", "river clean-up group"],
    "gift": ["a vintage record player", "a pottery class voucher", "a hand-knitted scarf", "a telescope",
             "a cast-iron pan", "a framed map of their hometown"],
    "language": ["Portuguese", "Japanese", "Turkish", "Dutch", "Korean", "Swahili", "Greek"],
    "restaurant": ["Casa Lume", "The Drifting Oyster", "Little Fig", "Marrow and Vine", "Saffron Door"],
    "race": ["Harbour half marathon", "city 10k", "trail ultra", "Bridge to Bridge run", "autumn marathon"],
    "diet": ["no sugar", "vegetarian", "vegan", "no coffee", "intermittent fasting"],
    "person": ["Mrs Okafor", "Mr Lindqvist", "Dana", "Ibrahim", "Coach Reyes", "Beatriz", "Mr Petrov"],
    "company": ["Northwind", "Bluebell Studios", "Harlow and Finch", "Greenleaf", "Orbit Labs", "Maplestone"],
    "band": ["Night Owls", "Velvet Static", "Paper Kites", "Sun Room", "Lowland Hum"],
    "daughter": ["Ella", "Ava", "Isla", "Nora", "Maren"],
    "son": ["Milo", "Theo", "Leo", "Sami", "Arlo"],
}


@dataclass(frozen=True, slots=True)
class Turn:
    speaker: int  # 0: the first person (stored as the user), 1: the second (the assistant)
    text: str
    key: str | None = None  # evidence key, for the turns questions are about
    fact: str | None = None  # the statement the evidence turn holds (the turn may say more)


@dataclass(frozen=True, slots=True)
class Question:
    kind: str
    text: str
    evidence: tuple[str, ...]  # the keys of the turns holding the answer


@dataclass
class Dialogue:
    names: tuple[str, str]
    sessions: list[list[Turn]] = field(default_factory=list)
    dates: list[datetime] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


Slots = dict[str, str]
# A fact: (the statements to plant, each (session offset, [turn texts, the last the evidence]), questions).
# Text is formatted with the slots; {who} in a question is the name of the person who said it.
Plant = tuple[list[tuple[int, list[str]]], list[str]]

SINGLE: list[Callable[[Slots], Plant]] = [
    lambda s: ([(0, [f"My {s['rel']} finally brought home a little {s['pet']}, and the name they picked is "
                     f"{s['petname']}."])],
               [f"What did {{who}}'s {s['rel']} call the new pet?", f"What is the name of the {s['rel']}'s pet?"]),
    lambda s: ([(0, [f"How is your {s['rel']}'s {s['pet']} doing? Did they settle on a name yet?",
                     f"{s['petname']}! It suits it, it chews everything in sight."])],
               [f"What is the name of {{who}}'s {s['rel']}'s {s['pet']}?"]),
    lambda s: ([(0, [f"I've been learning the {s['instrument']} on Thursday evenings, my fingers are sore."])],
               ["Which musical instrument is {who} learning to play?", "What instrument has {who} been learning?"]),
    lambda s: ([(0, [f"Big news from my {s['rel']}, they got the {s['job']} job at the hospital downtown."])],
               [f"What new job did {{who}}'s {s['rel']} get?"]),
    lambda s: ([(0, [f"The best thing I cooked this month was {s['dish']}, I'll make it again for the holidays."])],
               ["What meal did {who} enjoy cooking recently?", "Which dish was {who} proud of making?"]),
    lambda s: ([(0, ["Read anything good lately? I need something for the train.",
                     f"Yes, {s['book']}, it's about a lighthouse keeper. I couldn't put it down."])],
               ["What novel did {who} recommend for the train?"]),
    lambda s: ([(0, [f"We traded the old car in and got {s['car']}, mostly for the camping trips."])],
               ["What kind of car does {who} drive now?"]),
    lambda s: ([(0, [f"My {s['rel']} talked me into trying {s['sport']}, and honestly I'm hooked."])],
               [f"Which sport did {{who}} take up because of the {s['rel']}?"]),
    lambda s: ([(0, ["Did you ever get that rash checked out?",
                     f"I did, turns out I'm allergic to {s['allergen']}. The doctor confirmed it on Monday."])],
               ["What is {who} allergic to?", "What allergy did the doctor find for {who}?"]),
    lambda s: ([(0, [f"My {s['rel']} is moving to {s['city']} in the spring for work, I'll miss them."])],
               [f"Which city is {{who}}'s {s['rel']} relocating to?"]),
    lambda s: ([(0, [f"We painted the nursery {s['colour']} in the end, it feels so calm in there."])],
               ["What colour is the nursery at {who}'s place?"]),
    lambda s: ([(0, ["Where did you two end up going for the anniversary dinner?",
                     f"A tiny place called {s['restaurant']} by the harbour, the oysters were unreal."])],
               ["Which restaurant did {who} pick for the anniversary?"]),
    lambda s: ([(0, [f"The tomatoes did terribly this year but the {s['plant']} in the back garden went wild."])],
               ["What grew really well in {who}'s garden this year?"]),
    lambda s: ([(0, [f"I signed up to volunteer at the {s['org']} every other Saturday morning."])],
               ["Where does {who} volunteer?"]),
    lambda s: ([(0, [f"For my {s['rel']}'s birthday I found them {s['gift']}, they were over the moon."])],
               [f"What present did {{who}} give the {s['rel']}?"]),
    lambda s: ([(0, [f"I started learning {s['language']} with a language app, ten minutes every morning "
                     "on the bus."])],
               ["Which language is {who} studying?", "What language has {who} been practising on the bus?"]),
    lambda s: ([(0, ["So what was wrong with your knee in the end?",
                     "A torn meniscus, of all things. Physio twice a week for now and no running."])],
               ["What did {who}'s knee problem turn out to be?"]),
]

UPDATE: list[Callable[[Slots, Slots], Plant]] = [
    lambda a, b: ([(0, [f"I'm training for the {a['race']} this year, the long runs are brutal."]),
                   (2, [f"Change of plans: I dropped out of that one, I'm training for the {b['race']} instead."])],
                  ["Which race is {who} training for now?"]),
    lambda a, b: ([(0, [f"I still work at the small clinic near the station, I'm their {a['job']}."]),
                   (3, [f"I finally left the clinic, my new job is {b['job']} at a place downtown and I love it."])],
                  ["What is {who}'s current job?", "What does {who} do for a living these days?"]),
    lambda a, b: ([(0, [f"We're renting a flat in {a['city']} for now, it's tiny but central."]),
                   (2, [f"We moved! We live in {b['city']} now and the commute is so much shorter."])],
                  ["Where does {who} live at the moment?"]),
    lambda a, b: ([(0, [f"Saturdays are all about {a['sport']} at the moment."]),
                   (3, [f"I gave that up, it's {b['sport']} every weekend these days."])],
                  ["What does {who} do on the weekend lately?"]),
    lambda a, b: ([(0, [f"I'm driving {a['car']} that my uncle sold me cheap."]),
                   (2, [f"I sold that car in the end and bought {b['car']}, much better on long trips."])],
                  ["What car does {who} have now?"]),
    lambda a, b: ([(0, [f"I'm trying {a['diet']} for a month, let's see if I last."]),
                   (2, [f"I changed my diet again, {b['diet']} now, the first plan made me miserable."])],
                  ["Which diet is {who} following now?"]),
    lambda a, b: ([(0, [f"My {a['rel']} coaches the under-12 football team on Sundays."]),
                   (3, [f"My {a['rel']} stepped down as coach, {b['person']} runs the team now."])],
                  ["Who coaches the under-12 football team now?"]),
]

MULTI: list[Callable[[Slots, Slots], Plant]] = [
    lambda a, b: ([(0, [f"I've started learning an instrument, the {a['instrument']}, it's harder than it looks."]),
                   (2, [f"My music teacher, {a['person']}, says I might be ready for the spring recital."])],
                  ["Who teaches {who} music, and which instrument?"]),
    lambda a, b: ([(0, [f"We adopted a {a['pet']} called {a['petname']} from the shelter, our first pet."]),
                   (3, [f"We got a second pet, a {b['pet']} called {b['petname']}, the house is chaos."])],
                  ["What pets does {who} have?"]),
    lambda a, b: ([(0, [f"Just got back from our trip to {a['city']}, the food was incredible."]),
                   (2, [f"The next trip is {b['city']}, the flights were surprisingly cheap."])],
                  ["Where did {who} go on a trip, and where is the next one?"]),
    lambda a, b: ([(0, [f"I finished reading {a['book']} last night, what an ending."]),
                   (2, [f"I'm halfway through {b['book']} now, an even better book than the last one."])],
                  ["Which books has {who} been reading?"]),
    lambda a, b: ([(0, [f"My daughter {a['daughter']} starts kindergarten next week, I'm a wreck."]),
                   (2, [f"My son {a['son']} lost his first tooth at breakfast today."])],
                  ["What are the names of {who}'s daughter and son?"]),
    lambda a, b: ([(0, [f"I joined a club near work, we play {a['sport']} on Tuesdays."]),
                   (3, [f"On top of that I play {b['sport']} with my {a['rel']} on Fridays."])],
                  ["Which sports does {who} play during the week?"]),
]

WHEN: list[Callable[[Slots], Plant]] = [
    lambda s: ([(0, [f"We finally did the hike up {s['place']} this morning, my legs are jelly."])],
               [f"When did {{who}} go hiking at {s['place']}?"]),
    lambda s: ([(0, [f"I had the interview at {s['company']} yesterday, fingers crossed."])],
               [f"When did {{who}} interview with {s['company']}?"]),
    lambda s: ([(0, [f"My {s['rel']} got married last Saturday, the ceremony was on a boat."])],
               [f"When was {{who}}'s {s['rel']}'s wedding?"]),
    lambda s: ([(0, ["I ran my first 10k today without stopping once!"])],
               ["When did {who} run a 10k for the first time?"]),
    lambda s: ([(0, ["I passed my driving test this afternoon, first try."])],
               ["When did {who} pass the driving exam?"]),
    lambda s: ([(0, [f"Just got home from the {s['band']} gig, my ears are still ringing."])],
               [f"When did {{who}} see {s['band']} play live?"]),
    lambda s: ([(0, [f"Today was my first day at {s['company']}, everyone seems kind."])],
               [f"When did {{who}} start working at {s['company']}?"]),
    lambda s: ([(0, [f"My {s['rel']}'s baby arrived this morning, a little girl!"])],
               [f"When was {{who}}'s {s['rel']}'s baby born?"]),
    lambda s: ([(0, ["The kitchen renovation is done as of today, no more dust everywhere."])],
               ["When was {who}'s kitchen remodel finished?"]),
]

FILLER = [
    "How was your week?", "Busy, lots of meetings, but the weekend was nice.",
    "My {rel} came over on Sunday and we just watched films all afternoon.",
    "Have you ever been to {city}? I keep seeing photos of it.",
    "The weather has been awful, I haven't been outside properly for days.",
    "I keep meaning to try {sport} one day, maybe next month.", "Did you watch the match last night?",
    "My {rel} sent me a recipe for {dish}, not sure I'm brave enough to try it.",
    "Our neighbour's {pet} escaped again and ran through three gardens.",
    "Work is fine, the new manager seems nice so far.", "I'm thinking about a new car, but prices are wild.",
    "What are you up to this weekend?", "Probably laundry and a long walk, nothing exciting.",
    "That sounds lovely, honestly.", "Ha, I know exactly what you mean.", "Oh no, that's annoying.",
    "I've been sleeping badly, too much coffee I think.", "Did you see the news about the bridge closing?",
    "My {rel} wants to plan a trip together, maybe somewhere warm.",
    "I should read more, I keep buying books and not opening them.",
    "We had a barbecue in the garden, it rained halfway through of course.",
    "The kids have been sick all week, the house is a mess.", "How is your family doing?",
    "Everyone is well, thanks for asking.", "I tried a new bakery on the corner, their bread is amazing.",
    "I'm so tired of commuting, the trains are always late.", "Any plans for the holidays?",
    "Not yet, we might just stay home this year.", "My phone screen cracked again, third time this year.",
    "I watched a documentary about octopuses, they're so clever.", "Let's catch up properly soon.",
    "Definitely, I'll call you next week.", "I found an old photo album at my {rel}'s place.",
    "I really need a haircut.", "Music has been keeping me sane lately.", "Any good series to watch?",
    "The garden needs so much work before summer.", "I'm trying to drink more water, it's harder than it sounds.",
    "I went to a friend's birthday party, too much cake.", "How is the new flat?",
    "The doctor's office never answers the phone.", "The dog park was packed today.",
    "I burned the dinner last night, we ordered pizza.", "We should go hiking some time.",
    "I'm saving up for a bigger trip next year.", "That reminds me, I owe you a coffee.",
]


def _slots(rng: random.Random) -> Slots:
    return {k: rng.choice(v) for k, v in POOLS.items()}


def _fill(rng: random.Random, text: str) -> str:
    return text.format(**_slots(rng))


def build_dialogue(rng: random.Random, n_sessions: int, counts: dict[str, int]) -> Dialogue:
    """One two-person conversation over ``n_sessions`` sessions with ``counts`` questions of each kind."""
    names = tuple(rng.sample(NAMES, 2))
    dialogue = Dialogue((names[0], names[1]))
    planned: list[list[tuple[int, list[str], str | None]]] = [[] for _ in range(n_sessions)]
    serial = 0

    def plant(kind: str, plant_: Plant) -> None:
        nonlocal serial
        statements, questions = plant_
        speaker = rng.randrange(2)
        span = max(offset for offset, _ in statements)
        first = rng.randrange(n_sessions - span)
        keys = []
        for offset, texts in statements:
            serial += 1
            key = f"e{serial}"
            keys.append(key)
            planned[first + offset].append((speaker, texts, key))
        who = dialogue.names[speaker]
        evidence = (keys[-1],) if kind == "update" else tuple(keys)
        dialogue.questions.append(Question(kind, rng.choice(questions).format(who=who), evidence))

    banks: list[tuple[str, list[Callable[..., Plant]]]] = [
        ("single", list(SINGLE)), ("update", list(UPDATE)), ("multi", list(MULTI)), ("when", list(WHEN))]
    for kind, bank in banks:
        for make in rng.sample(bank, min(counts[kind], len(bank))):
            plant(kind, make(_slots(rng), _slots(rng)) if kind in ("update", "multi") else make(_slots(rng)))
    clock = datetime(2023, 3, 4, 18, 0, tzinfo=UTC)
    for planted in planned:
        clock += timedelta(days=rng.randint(4, 21), minutes=rng.randint(0, 600))
        dialogue.dates.append(clock)
        turns = [Turn(n % 2, " ".join(_fill(rng, t) for t in rng.sample(FILLER, rng.randint(1, 3))))
                 for n in range(rng.randint(18, 30))]
        for speaker, texts, key in planted:
            at = rng.randint(1, len(turns) - 1)
            # the turns of a statement alternate speakers; the evidence (last) is the stating person's
            block = [Turn((speaker + len(texts) - 1 - i) % 2, t, *((key, t) if i == len(texts) - 1 else ()))
                     for i, t in enumerate(texts)]
            if rng.random() < 0.5:  # the fact is not always the whole turn
                last = block[-1]
                block[-1] = Turn(last.speaker, f"{last.text} {_fill(rng, rng.choice(FILLER))}", last.key, last.fact)
            turns[at:at] = block
        dialogue.sessions.append(turns)
    return dialogue


def write_sessions(dialogue: Dialogue, directory: Path, cwd: str, rng: random.Random) -> dict[str, str]:
    """Claude Code transcripts, one per session; returns the evidence key -> the statement its turn holds."""
    evidence = {}
    directory.mkdir(parents=True, exist_ok=True)
    for turns, start in zip(dialogue.sessions, dialogue.dates, strict=True):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        parent: str | None = None
        lines = []
        for n, turn in enumerate(turns):
            uid = str(uuid.UUID(int=rng.getrandbits(128)))
            role = "user" if turn.speaker == 0 else "assistant"
            message: dict[str, object] = {"role": role, "content": turn.text}
            if role == "assistant":
                message = {"role": role, "id": f"msg_{uid[:8]}", "type": "message", "model": "claude-sonnet-4",
                           "content": [{"type": "text", "text": turn.text}]}
            at = start + timedelta(minutes=2 * n)
            lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                          "sessionId": sid, "version": "1.0.98", "type": role, "uuid": uid,
                          "timestamp": at.isoformat().replace("+00:00", "Z"), "message": message})
            parent = uid
            if turn.key and turn.fact:
                evidence[turn.key] = turn.fact
        (directory / f"{sid}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return evidence
