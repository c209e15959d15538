"""SkillPilot: route a message to the right agent skill before the LLM runs."""
