"""Collection health over time: cheap per-run measurements and baselines learned from stored runs.

``models`` is what a run measures; ``collect`` measures it during an audit without another pass
over the collection; ``baseline`` compares it with the robust baseline of earlier runs and names
the anomalies; ``findings`` turns them into findings that flow like any other (diff, alerts,
labels). Import the submodules directly: ``argus.agent.history`` depends on ``models``.
"""
