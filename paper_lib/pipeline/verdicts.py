"""What a verdict says, in the words a reader scans: the house's verdict words (:class:`Kind`), what each says
of the paper's number and of the controls (the results tables' two columns), what each word means (their
legend) and the band a figure of the claim carries (:func:`mark_text`). Our design: the paper is silent."""
from __future__ import annotations

from enum import Enum


class Kind(str, Enum):
    """A verdict as REPORT.md prints it: a rule's yes / partly / no, or why none was reached."""

    YES = "yes"
    PARTLY = "partly"
    NO = "no"
    NOT_INFORMATIVE = "not informative at this budget"
    NOT_LEARNING = "the number; not attributable to learning"
    NOT_CONTEXT = "the number; not attributable to context"
    NOT_ATTRIBUTABLE = "not attributable at this budget"
    EXACT = "exact arithmetic"  # "exact arithmetic: not a test of the mechanism": no noise budget, no test
    UNDETERMINED = "undetermined"
    MISSING = "metric missing"
    NOT_RUN = "not run yet"

    @classmethod
    def of(cls, holds: str) -> Kind:
        """The kind of a verdict's words (``"metric missing: x"``: :attr:`MISSING`). Raises ValueError: unknown."""
        return cls(str(holds).split(":")[0].strip())

    @property
    def decided(self) -> bool:  # a rule reached yes, partly or no: its controls passed
        return self in (Kind.YES, Kind.PARTLY, Kind.NO)


NUMBER_WORDS = {"yes": "reproduced", "partly": "close", "no": "not reproduced"}  # a number rule's verdict, said
NOT_AT_SCALE, CONTROLS_PASS = "not run at paper scale", "the controls pass"
HOLDS_WORDS = {Kind.YES: "holds", Kind.PARTLY: "holds in part", Kind.NO: "does not hold"}

LEGEND = {
    "reproduced": "ours is within the row's tolerance of the paper's number (close: within twice it)",
    NOT_AT_SCALE: "the paper's number comes from its 130M-parameter model on C4; ours from a smaller model on a small "
                  "corpus, so the numbers are not compared, only the models with their controls",
    CONTROLS_PASS: "the controls behaved as they must, so the number can be credited to the model",
    "not informative at this budget": "a control that must succeed did not, so the run could not have shown the "
                                      "claim either way; a larger budget may",
    "not attributable to learning": "the number is there, but a control without learning reaches it too",
    "not attributable to context": "the number is there, but a control that ignores context reaches it too",
    "not attributable at this budget": "an arm the rule reads was cut at its step cap while still learning, or "
                                       "never left the chance loss",
    "exact arithmetic": "the states carry no noise, and in exact arithmetic a fixed bank loses nothing: the row "
                        "would test float precision, not the mechanism",
    "undetermined": "fewer than two seeds, or a smoke run: no interval",
}
"""What each word of the two verdict columns means (the tables' legend lists those they use)."""


def number_word(rule_word: str | None, paper: bool, comparable: bool) -> str:
    """The "number reproduced?" cell: ``""`` without a paper number, :data:`NOT_AT_SCALE` where ours measures
    something else, else a number rule's yes / partly / no in :data:`NUMBER_WORDS` (``""`` when it did not run)."""
    if not paper:
        return ""
    if not comparable:
        return NOT_AT_SCALE
    return NUMBER_WORDS.get(rule_word or "", "")


def controls_word(kind: Kind, numbered: bool) -> str:
    """The "what the controls say" cell: a decided claim with a number of the paper's :data:`CONTROLS_PASS` (the
    number cell says the rest), another :data:`HOLDS_WORDS`; else why nothing was decided."""
    if kind.decided:
        return CONTROLS_PASS if numbered else HOLDS_WORDS[kind]
    return kind.value.removeprefix("the number; ")


def legend(words) -> str:
    """The legend of the verdict ``words`` a table shows, in :data:`LEGEND`'s order, as one Markdown paragraph."""
    shown = set(words)
    return " ".join(f"*{w}*: {text}." for w, text in LEGEND.items()
                    if w in shown or (w == "reproduced" and "close" in shown))


def mark_text(kind: Kind, number: str = "") -> str:
    """The band a figure of a claim with verdict ``kind`` carries (``number``: its "number reproduced?" cell);
    ``""`` for yes and no, the claim decided. The one wording of the mark, on the PNG and on every page."""
    matches = "The number matches the paper's" if number in ("reproduced", "close") else "The number is ours"
    return {Kind.YES: "", Kind.NO: "",
            Kind.PARTLY: "The claim holds only in part",
            Kind.NOT_INFORMATIVE: "Not informative at this budget: a control failed, so this decides nothing",
            Kind.NOT_LEARNING: f"{matches}; a control without learning reaches it too",
            Kind.NOT_CONTEXT: f"{matches}; a control that ignores context reaches it too",
            Kind.NOT_ATTRIBUTABLE: "Not attributable at this budget: an arm was cut at its step cap",
            Kind.EXACT: "Exact arithmetic: not a test of the mechanism",
            Kind.UNDETERMINED: "Undetermined: one seed or a smoke run, no interval",
            }.get(kind, "Not decided: its numbers are missing")
