"""Incidents: findings of a collection grouped into one problem with a status, an owner and a
history (models), what a stored run does to them (tracker), the notices channels get (notices),
and where people act on them (cli, http). They are kept in the history database
(argus.daemon.store.incidents)."""

__all__: list[str] = []
