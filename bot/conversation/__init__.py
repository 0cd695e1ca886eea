"""Nova listens: the conversation on a change, read on every run, on every host.

- ``commands`` — ``@nova`` commands parsed once, host-independently, from untrusted text;
- ``model`` — notes, threads, the record of one change, and the ``Conversation`` host
  ability (``bot/hosts/<host>/conversation.py`` read and write their host only);
- ``ledger`` — every command and its decision, rebuilt from the host's threads on every
  run (the host is the record; Nova keeps no state of its own), authority asked of the host;
- ``gate`` — dismissed findings leave ``--fail-on``; threads whose finding was fixed;
- ``answers`` / ``ask`` — what Nova replies (texts; a model's answer to a question);
- ``respond`` — each answer posted exactly once, decisions as events and a step;
- ``listen`` — the conversation in a run of ``nova review`` / ``nova respond``.

Nothing is imported here: ``bot.config`` loads ``bot.conversation.settings`` on every
command, so callers import from the modules (``bot.conversation.model``).
"""
