"""What only the real-CLI tests read from the model requests the agent CLIs make (never shipped
in the wheel). The scripted model endpoints themselves, a recording server on 127.0.0.1 per CLI,
ship in :mod:`skillpilot.bench.hostcli`, because ``skillpilot eval host`` drives the real CLIs
through them at run time."""
