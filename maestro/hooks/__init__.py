"""Claude Code hook verbs: gate (PreToolUse), inject (UserPromptSubmit), session-start."""
