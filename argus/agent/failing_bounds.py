"""How many failing documents a finding keeps (``AuditOptions.failing_documents``): a leaf module,
so that the tool models and the options can both name the bounds without importing each other."""

FAILING_DEFAULT = 20    # each finding's failing documents unless a schedule or ARGUS_FAILING_DOCUMENTS says
FAILING_MAX = 100       # the most a finding may keep
FAILING_PER_RUN = 1000  # the most a run keeps in all (argus.agent.failing.bounded)
