"""``nova serve``: webhooks in, one job per change out.

A delivery is verified on its raw bytes and classified by its host's ``webhook.py``
(``bot.hosts.<host>.webhook``), queued durably (``queue``), and run as the same one-shot
``nova`` job the CI runs, by an executor (``executors``: a local pool of subprocesses, or
Kubernetes Jobs). Nothing here reviews inside the web process.
"""
