"""The task store: one SQLite file in the notes folder that every lab process on that folder shares.

A task is a row, not a Python object, so any lab process can answer `tasks/get` for a task another
process runs (the stateless core made real). SQLite from the standard library in WAL mode lets
readers and one writer work at once; every read-modify-write is one `BEGIN IMMEDIATE` transaction,
so two processes never interleave half an update.

The process that runs a task holds a lease on it (`lease_until_ms`) and renews it while it works.
A task whose lease ran out while it was not finished has lost its worker (the process was killed):
the first read after that turns it `failed`, from whichever process reads it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

FILE_NAME = ".tasks.sqlite3"  # a dot file: NoteStore lists only *.md, so it never shows up as a note
TERMINAL = frozenset({"completed", "failed", "cancelled"})
LEASE_MS = 5_000
KEEP_EXPIRED_MS = 3_600_000  # an expired task still answers "Task has expired" for an hour, then is purged
INTERNAL_ERROR = -32603
# Every visible change moves lastUpdatedAt forward, even two in one millisecond: one stamp is one state.
NEXT_STAMP = "MAX(?, updated_ms + 1)"
WORKER_LOST_MESSAGE = "The worker running this task was lost: its lab process stopped before the task finished."

SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    ttl_ms INTEGER,
    poll_ms INTEGER,
    input_requests TEXT,
    input_responses TEXT NOT NULL DEFAULT '{}',
    asked_keys TEXT NOT NULL DEFAULT '[]',
    result TEXT,
    error TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until_ms INTEGER,
    version INTEGER NOT NULL DEFAULT 1
)
"""


class TaskNotFound(LookupError):
    """No task with this id for this principal (or none at all: the two are never told apart)."""


class TaskExpired(LookupError):
    """The task's ttlMs has passed."""


def now_ms() -> int:
    return int(time.time() * 1000)


def iso(ms: int) -> str:
    """ISO 8601 in UTC with milliseconds, e.g. 2026-12-02T03:11:24.123Z."""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    owner: str
    tool: str
    status: str
    status_message: str | None
    created_ms: int
    updated_ms: int
    ttl_ms: int | None
    poll_ms: int | None
    input_requests: dict[str, Any] | None
    input_responses: dict[str, Any]
    asked_keys: list[str]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    cancel_requested: bool
    lease_owner: str | None
    lease_until_ms: int | None
    version: int

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, at_ms: int) -> bool:
        return self.ttl_ms is not None and at_ms > self.created_ms + self.ttl_ms

    def task(self) -> dict[str, Any]:
        """The Task fields in the spec's order; statusMessage and pollIntervalMs only when set."""
        task: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task |= {"createdAt": iso(self.created_ms), "lastUpdatedAt": iso(self.updated_ms), "ttlMs": self.ttl_ms}
        if self.poll_ms is not None:
            task["pollIntervalMs"] = self.poll_ms
        return task

    def detailed(self) -> dict[str, Any]:
        """The DetailedTask variant that matches the status (what tasks/get and notifications/tasks carry)."""
        task = self.task()
        if self.status == "input_required":
            task["inputRequests"] = self.input_requests or {}
        elif self.status == "completed":
            task["result"] = self.result or {}
        elif self.status == "failed":
            task["error"] = self.error or {"code": INTERNAL_ERROR, "message": "Task failed"}
        return task


_JSON_COLUMNS = {"input_requests", "input_responses", "asked_keys", "result", "error"}


def _row(record: sqlite3.Row) -> TaskRow:
    values = {key: record[key] for key in record.keys()}
    for key in _JSON_COLUMNS:
        if values[key] is not None:
            values[key] = json.loads(values[key])
    values["cancel_requested"] = bool(values["cancel_requested"])
    return TaskRow(**values)


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _enter_wal(db: sqlite3.Connection) -> None:
    """Switch a new store to WAL. The switch needs the file to itself, and SQLite does not wait for it with the
    busy timeout: a second lab opening the same new store at that moment was told "database is locked"."""
    deadline = time.monotonic() + 10
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class TaskStore:
    """All tasks of one notes folder. Safe to share between threads and between processes."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / FILE_NAME
        self._local = threading.local()
        with self._transaction() as db:
            db.execute(SCHEMA)

    def _db(self) -> sqlite3.Connection:
        # One connection per thread: sqlite3 connections must not cross threads.
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=True)
            db.row_factory = sqlite3.Row
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":  # WAL stays with the file once set
                _enter_wal(db)
            # FULL: a task the lab has announced survives a crash of the machine, not only of the process.
            db.execute("PRAGMA synchronous=FULL")
            self._local.db = db
        return db

    class _Transaction:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind: object, *_: object) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def _transaction(self) -> TaskStore._Transaction:
        return self._Transaction(self._db())

    def _read(self, db: sqlite3.Connection, task_id: str) -> TaskRow | None:
        record = db.execute("SELECT * FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        return None if record is None else _row(record)

    # --- what the protocol methods need ---------------------------------------------------------

    def create(self, *, owner: str, tool: str, status_message: str, ttl_ms: int | None, poll_ms: int,
               worker: str) -> TaskRow:
        """A new working task leased to `worker`, committed before this returns (so tasks/get resolves it)."""
        task_id = str(uuid.uuid4())  # 122 random bits from os.urandom: an id nobody can guess
        at = now_ms()
        with self._transaction() as db:
            db.execute("DELETE FROM tasks WHERE ttl_ms IS NOT NULL AND created_ms + ttl_ms + ? < ?",
                       (KEEP_EXPIRED_MS, at))
            db.execute(
                "INSERT INTO tasks (task_id, owner, tool, status, status_message, created_ms, updated_ms, ttl_ms,"
                " poll_ms, lease_owner, lease_until_ms) VALUES (?, ?, ?, 'working', ?, ?, ?, ?, ?, ?, ?)",
                (task_id, owner, tool, status_message, at, at, ttl_ms, poll_ms, worker, at + LEASE_MS),
            )
            row = self._read(db, task_id)
        assert row is not None
        return row

    def get(self, task_id: str, owner: str) -> TaskRow:
        """The task as its owner may see it now; a task whose worker was lost is failed first."""
        at = now_ms()
        row = self._read(self._db(), task_id)
        if row is None or row.owner != owner:
            raise TaskNotFound(task_id)
        if row.expired(at):
            raise TaskExpired(task_id)
        if not row.terminal and row.lease_until_ms is not None and row.lease_until_ms < at:
            row = self._fail_lost(task_id, at) or row
        return row

    def _fail_lost(self, task_id: str, at: int) -> TaskRow | None:
        error = {"code": INTERNAL_ERROR, "message": "Task worker lost"}
        with self._transaction() as db:
            # The WHERE repeats the test: another process may have renewed or failed it meanwhile.
            db.execute(
                "UPDATE tasks SET status = 'failed', status_message = ?, error = ?, input_requests = NULL,"
                f" updated_ms = {NEXT_STAMP}, lease_owner = NULL, lease_until_ms = NULL, version = version + 1"
                " WHERE task_id = ? AND status NOT IN ('completed', 'failed', 'cancelled') AND lease_until_ms < ?",
                (WORKER_LOST_MESSAGE, _dumps(error), at, task_id, at),
            )
            return self._read(db, task_id)

    def answer(self, task_id: str, owner: str, responses: dict[str, Any]) -> None:
        """Record answers to outstanding input requests; unknown or already answered keys are ignored.

        While other requests of the same round are still unanswered, the answered ones leave `inputRequests` at
        once (it holds every *outstanding* request) and the task stays input_required. Once every request is
        answered, the task stays as it was until its worker takes the answers (eventually consistent, as the
        extension allows): the acknowledgement only says the answers are stored.
        """
        self.get(task_id, owner)
        with self._transaction() as db:
            row = self._read(db, task_id)
            if row is None or row.status != "input_required" or not row.input_requests:
                return
            taken = {key: value for key, value in responses.items()
                     if key in row.input_requests and key not in row.input_responses}
            if not taken:
                return
            answered = {**row.input_responses, **taken}
            outstanding = {key: request for key, request in row.input_requests.items() if key not in answered}
            if outstanding:
                db.execute(f"UPDATE tasks SET input_responses = ?, input_requests = ?, updated_ms = {NEXT_STAMP},"
                           " version = version + 1 WHERE task_id = ?",
                           (_dumps(answered), _dumps(outstanding), now_ms(), task_id))
            else:
                db.execute("UPDATE tasks SET input_responses = ? WHERE task_id = ?", (_dumps(answered), task_id))

    def request_cancel(self, task_id: str, owner: str) -> None:
        """Ask the worker to stop; it does so at its next check (cooperative, eventually consistent)."""
        self.get(task_id, owner)
        with self._transaction() as db:
            db.execute("UPDATE tasks SET cancel_requested = 1 WHERE task_id = ?"
                       " AND status NOT IN ('completed', 'failed', 'cancelled')", (task_id,))

    def versions(self, task_ids: list[str]) -> dict[str, int]:
        """{task id: version} for the ids that exist; a version grows with every change a client can see."""
        if not task_ids:
            return {}
        marks = ",".join("?" * len(task_ids))
        rows = self._db().execute(f"SELECT task_id, version, status, lease_until_ms FROM tasks WHERE task_id IN ({marks})",
                                  task_ids).fetchall()
        at = now_ms()
        # A task whose lease ran out counts as changed, so a watcher reads it (and fails it) at once.
        return {r["task_id"]: r["version"] + (1 if r["status"] not in TERMINAL and r["lease_until_ms"] is not None
                                              and r["lease_until_ms"] < at else 0) for r in rows}

    # --- what the worker needs ------------------------------------------------------------------

    def worker_view(self, task_id: str) -> TaskRow:
        row = self._read(self._db(), task_id)
        if row is None:
            raise TaskNotFound(task_id)
        return row

    def update(self, task_id: str, worker: str, **changes: Any) -> bool:
        """Apply changes (column=value) and renew the lease, only while `worker` still holds the task.

        Returns False when the task is no longer this worker's (finished, failed as lost, purged).
        """
        at = now_ms()
        columns = {key: (_dumps(value) if key in _JSON_COLUMNS else value) for key, value in changes.items()}
        visible = bool(columns)
        assignments = "".join(f"{key} = ?, " for key in columns)
        if visible:
            assignments += f"updated_ms = {NEXT_STAMP}, version = version + 1, "
        values = [*columns.values(), *([at] if visible else [])]
        terminal = changes.get("status") in TERMINAL
        lease = "lease_owner = NULL, lease_until_ms = NULL" if terminal else "lease_until_ms = ?"
        values += [] if terminal else [at + LEASE_MS]
        with self._transaction() as db:
            cursor = db.execute(
                f"UPDATE tasks SET {assignments}{lease} WHERE task_id = ? AND lease_owner = ?"
                " AND status NOT IN ('completed', 'failed', 'cancelled')",
                (*values, task_id, worker),
            )
            return cursor.rowcount == 1

    def ask(self, task_id: str, worker: str, requests: dict[str, dict[str, Any]], message: str) -> bool:
        """Put the task in input_required with new questions, all outstanding at once; a key is never asked twice."""
        with self._transaction() as db:
            row = self._read(db, task_id)
            if row is None or row.lease_owner != worker or row.terminal:
                return False
            reused = [key for key in requests if key in row.asked_keys]
            if reused or not requests:
                raise ValueError(f"input keys {reused} were already used by this task; keys are never reused"
                                 if reused else "a task asks at least one question at a time")
            db.execute(
                "UPDATE tasks SET status = 'input_required', status_message = ?, input_requests = ?,"
                f" asked_keys = ?, updated_ms = {NEXT_STAMP}, lease_until_ms = ?, version = version + 1 WHERE task_id = ?",
                (message, _dumps(requests), _dumps([*row.asked_keys, *requests]), now_ms(), now_ms() + LEASE_MS,
                 task_id),
            )
            return True

    def count(self) -> int:
        return self._db().execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
