"""The agent machinery the review and testgen agents share: the LangGraph loop
(``graph``) and the context tools that read the change's head revision (``tools``)."""
