"""Running untrusted code: generated tests now, a project's own linters next.

- ``run``: choosing the isolation tier (``choose_isolation``) and running a command under it
  (``run_sandboxed``) with a scrubbed environment, limits and output caps.
- ``confine``: the filesystem view (what is hidden, what is shown, Nova's own code).
- ``reaper``: the run's first process; it kills and names what a run leaves behind.
- ``guard``: what every Nova process does first (non-dumpable), and the parent-death
  signal that ends a run with its job.

Callers import from the modules (``bot.sandbox.run``); this package imports nothing, so
``import bot.sandbox.reaper`` as a script stays standard-library only.
"""
