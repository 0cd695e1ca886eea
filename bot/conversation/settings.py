"""Who may ask Nova questions on a change, and how many answers an hour it gives."""

from __future__ import annotations

from dataclasses import dataclass

from bot.sections import Section, setting

__all__ = ["ASKERS", "QuestionSettings"]

ASKERS = ("author-and-mergers", "mergers", "anyone")


@dataclass(frozen=True)
class QuestionSettings(Section):
    prefix = "questions_"

    askers: str = setting(
        "NOVA_QUESTIONS_FROM",
        "Who Nova answers questions from (each answer is a model call): the change's author "
        "and people who may merge (`author-and-mergers`), only people who may merge "
        "(`mergers`), or `anyone` (e.g. a public repository that wants it).",
        "author-and-mergers",
        choices=ASKERS,
        repo_ok=True,
        key="questions_from",
    )
    per_change: int = setting(
        "NOVA_ANSWERS_PER_HOUR",
        "Answers to questions Nova gives on one change in an hour (counted from the host's "
        "threads); past it, one short reply says so and the rest wait.",
        20,
        parse=int,
        repo_ok=True,
        min=0,
        key="answers_per_hour",
    )
    per_person: int = setting(
        "NOVA_ANSWERS_PER_PERSON_PER_HOUR",
        "Answers to one person's questions Nova gives on one change in an hour.",
        5,
        parse=int,
        repo_ok=True,
        min=0,
        key="answers_per_person_per_hour",
    )
