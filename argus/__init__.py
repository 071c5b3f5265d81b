"""Argus: a data-quality monitoring daemon for MongoDB and Azure Cosmos DB (Mongo API).

One package, three floors, each importing only the floors below it:

- ``argus.agent``: one audit of one collection (tools, planners, gates, the in-process engine, the report);
- ``argus.config``: settings, ``schedules.yaml`` and contracts, built on the agent's models;
- ``argus.daemon``: the scheduler, runner, history store, diff, alerts, metrics, HTTP and the ``argus`` CLI.
"""
