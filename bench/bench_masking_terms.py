"""What a long list of redaction terms and a long outcome lexicon cost, in one run.

    .venv/bin/python bench/bench_masking_terms.py                       # 10, 2,000 and 20,000 terms; 35,000 patterns
    .venv/bin/python bench/bench_masking_terms.py --terms 10 2000 20000 --patterns 35000 --messages 800

Not a test; it prints figures and asserts none.

1. **Terms** (`[redact] terms` of a `--redact-config`), for each count: reading the configuration and
   masking a two-message transcript (`Redactor.text`), then what a masking command does before its
   first answer — opening a masking connection (`analytics.masking.blind_search`) and one search of
   an in-memory table of those two messages (`analytics.text_match.contains_sql`, a word found in
   both) — and 1,000 messages masked. Terms are random two-word names; one of them is in the text.
2. **Outcome lexicon** of `--patterns` plain phrases (`human`, `wrong`, `closing`, `give_up`, a
   quarter each, added to the built-in ones): compiling it (`lexicon_from`) and reading `--messages`
   user messages (`Lexicon.find` of the four categories, as `conversation_outcomes.texts` does).
"""

from __future__ import annotations

import argparse
import os
import random
import string
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))


def terms_figures(count: int, folder: Path, rng: random.Random) -> str:
    import duckdb

    from analytics.masking import blind_search
    from analytics.redact import CONFIG_ENV, RedactConfig, Redactor
    from analytics.text_match import contains_params, contains_sql

    terms = [f"{_word(rng).title()} {_word(rng).title()}" for _ in range(count)]
    config = folder / f"redact-{count}.toml"
    config.write_text("[redact]\nterms = [" + ", ".join(f'"{t}"' for t in terms) + "]\n", encoding="utf-8")
    messages = [f"Hi, this is {terms[count // 2]}; my refund for order A-1043 please, mail bob@example.com",
                "Sure, your refund is on its way. Anything else?"]
    start = time.perf_counter()
    redactor = Redactor(RedactConfig.from_toml(config))
    masked = [redactor.text(m) for m in messages]
    transcript = time.perf_counter() - start
    assert terms[count // 2] not in masked[0]
    os.environ[CONFIG_ENV] = str(config)
    start = time.perf_counter()
    con = duckdb.connect()
    blind_search(con)
    con.execute("CREATE TABLE m AS SELECT unnest(?::VARCHAR[]) AS content", [messages])
    hits = con.execute(f"SELECT count(*) FROM m WHERE {contains_sql('content')}", contains_params("refund")).fetchone()[0]
    search = time.perf_counter() - start
    many = [f"{m} #{n}" for n in range(500) for m in messages]
    start = time.perf_counter()
    for m in many:
        redactor.text(m)
    bulk = time.perf_counter() - start
    return (f"{count:>6} terms: config + 2 messages masked {transcript:7.3f} s, masking connection + one search "
            f"{search:7.3f} s ({hits} of 2 found), 1,000 messages masked {bulk:7.3f} s")


def lexicon_figures(patterns: int, messages: int, rng: random.Random) -> str:
    from analytics.conversation_outcomes.lexicon import clauses, lexicon_from

    categories = ("human", "wrong", "closing", "give_up")
    data = {"extend": True, **{c: [" ".join(_word(rng) for _ in range(rng.randint(1, 3)))
                                   for _ in range(patterns // len(categories))] for c in categories}}
    common = ["please", "talk", "to", "a", "human", "thanks", "not", "but", "wrong", "it", "is", "the", "order",
              "i", "want", "agent", "this", "does", "work", "no"]
    texts = [" ".join(rng.choice(common) if rng.random() < 0.8 else _word(rng) for _ in range(rng.randint(5, 40)))
             + ", thanks but no" for _ in range(messages)]
    start = time.perf_counter()
    lexicon = lexicon_from(data)
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    found = 0
    for text in texts:
        parts = clauses(text)
        words = frozenset(w for clause in parts for w in clause)
        found += sum(lexicon.find(c, parts, words) for c in categories)
    read = time.perf_counter() - start
    return (f"lexicon of {patterns:,} patterns: compiled {compiled:6.2f} s, {messages} messages read {read:6.2f} s "
            f"({found} category matches)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, nargs="+", default=[10, 2000, 20000])
    parser.add_argument("--patterns", type=int, default=35000)
    parser.add_argument("--messages", type=int, default=800)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        for count in args.terms:
            print(terms_figures(count, Path(folder), rng), flush=True)
    print(lexicon_figures(args.patterns, args.messages, rng), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
