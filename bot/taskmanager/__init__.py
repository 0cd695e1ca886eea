"""The Task Manager: its settings (``settings``), clients (HTTP and in-memory, ``client``,
``http``) and the backend that mirrors steps to it (``backend``).

Nothing is imported here: ``bot.config`` reads ``bot.taskmanager.settings`` on every run,
``nova --help`` included.
"""
