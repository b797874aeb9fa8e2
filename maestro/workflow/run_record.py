"""What a finished loop or watchdog run leaves in project memory: an outcome record, and a
handoff while the task is still open (maestro/memory/project/outcomes.py, handoffs.py).

Recording never changes a run's result: any failure here is one `<SCOPE>_WARNING` record and the
run ends exactly as it would have. `MAESTRO_MEMORY_RECORD=0` turns it off (a throwaway run).
"""

import os
import re

from maestro.memory.project import outcomes

_PATH_TOKEN = re.compile(r"[\w./-]*\w\.\w+|[\w.-]+/[\w./-]*\w")
MAX_NAMED = 50

OFF_VALUES = ("0", "false", "no", "off")


def enabled() -> bool:
    return os.environ.get("MAESTRO_MEMORY_RECORD", "1").strip().lower() not in OFF_VALUES


def named_files(text: str, root: str) -> list:
    """Repository files a plan names (`src/app.py`, `app.py`): with the files a run changed, these
    are the files in play that session-start matches learned patterns against."""
    found = set()
    for token in _PATH_TOKEN.findall(text):
        token = token.strip("./") if token.startswith("./") else token.rstrip(".")
        if len(found) >= MAX_NAMED:
            break
        if token and not token.startswith(("/", "..")) and os.path.isfile(os.path.join(root, token)):
            found.add(os.path.normpath(token))
    return sorted(found)


def session_id():
    from maestro.util.session import is_valid_session_id

    value = os.environ.get("MAESTRO_SESSION_ID")
    return value if is_valid_session_id(value) else None


class RunRecorder:
    def __init__(self, ctx, kind: str, plan_text: str, plan_path: str = None, verify: str = None, *, worktree=None):
        self.ctx, self.kind, self.plan_path, self.verify = ctx, kind, plan_path, verify
        # a --worktree run (workflow/worktree_run.WorktreeRun): its memory is the user's checkout's, and its
        # next command re-enters that worktree
        self.worktree = worktree
        self.title = outcomes.plan_title(plan_text)
        if plan_path:
            self.task_id = outcomes.task_id_for_plan(plan_path)
        else:  # an inline watchdog plan: the task is its text
            from hashlib import sha1

            slug = outcomes.project.slugify(self.title, 40) or "plan"
            self.task_id = f"{slug}-{sha1(plan_text.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"
        self.started_at = outcomes.now_utc()
        self.named = named_files(plan_text, ctx.root)
        self.attempts = []
        self.last_verify = None

    def attempt(self, n: int, result: str, summary: str, output: str = "") -> None:
        check = outcomes.failure_signature(self.verify, output) if self.verify and result.startswith("verify") else ""
        from maestro.memory.store.sanitize import filter_text

        summary = filter_text(summary)[:300]  # sanitized, then bounded
        self.attempts.append({"n": n, "result": result, "check": check, "summary": summary})

    def verified(self, state: str, rc: int, output: str) -> None:
        self.last_verify = {"command": self.verify, "last_state": state, "last_rc": rc,
                            "last_output_tail": outcomes.tail(output)}

    def finish(self, state: str, rc: int, iterations: int, result_text: str = "") -> None:
        if not enabled():
            return
        try:
            self._finish(state, rc, iterations, result_text)
        except Exception as exc:  # noqa: BLE001 - memory must never change the run's result
            from maestro import crash

            crash.record(f"{self.kind}:outcome", exc)
            self.ctx.emit(f"{self.kind.upper()}_WARNING: could not record the outcome in project memory "
                          f"({exc.__class__.__name__}: {str(exc)[:200]})")

    def _finish(self, state: str, rc: int, iterations: int, result_text: str) -> None:
        from maestro.memory.project import handoffs
        from maestro.memory.project import files as project

        memory = project.ProjectMemory(self.worktree.user_root if self.worktree is not None else self.ctx.root)
        questions = outcomes.tail(result_text) if state == "NEEDS_ANSWERS" and result_text else None
        verify = self.last_verify or ({"command": self.verify, "last_state": None, "last_rc": None,
                                       "last_output_tail": ""} if self.verify else None)
        value = outcomes.record(
            kind=self.kind, task_id=self.task_id, state=state, rc=rc, started_at=self.started_at,
            plan=os.path.abspath(self.plan_path) if self.plan_path else None, title=self.title,
            iterations=iterations, verify=verify, attempts=self.attempts,
            files_changed=self.ctx.files_changed() or (), files_named=self.named, session_id=session_id(),
            questions=questions)
        path = outcomes.save(memory, value)
        self.ctx.emit(f"{self.kind.upper()}_OUTCOME: {state} recorded in {path}")
        if state in outcomes.OPEN_STATES:
            handoffs.write(memory, task_id=self.task_id, kind=self.kind, title=self.title, plan=value["plan"],
                           state=state, iterations=iterations,
                           next_command=handoffs.next_step(state, value["plan"], self.verify, self.kind, self.task_id,
                                                           **self._worktree_options()),
                           questions=value["questions"], files=[*value["files_changed"], *self.named],
                           outcome=value["id"], session_id=value["session_id"])
        else:
            handoffs.remove(memory, self.task_id)

    def _worktree_options(self) -> dict:
        if self.worktree is None:
            return {}
        return {"worktree": self.worktree.name, "worktree_dir": self.worktree.directory}
