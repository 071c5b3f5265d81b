"""One test double per seam, each a real implementation of it: ``planner.ScriptedPlanner`` (the planner
seam: replays a script of actions), ``model_server.LocalChatServer`` (the model seam: a real local HTTP
server speaking the OpenAI chat API, with scripted replies) and ``explorer.Explorer`` (a reply script for
that server that explores a collection with every tool). Tests and bench/ use these, never a private copy;
they live here, not in the ``argus`` package, so the wheel ships no test code."""
