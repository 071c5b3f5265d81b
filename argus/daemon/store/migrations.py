"""Versioned schema migrations, applied at start-up, safe to run from several processes at once.

Each migration runs once, in order, inside one transaction that first takes a transaction-level
advisory lock: a second process starting at the same moment waits, then finds the work done.
Add a migration by appending to ``MIGRATIONS``; never edit one that has shipped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MIGRATIONS", "migrate"]

_LOCK = 0x4152_4755_5331  # "ARGUS1": the advisory lock key for migrations

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "runs, findings, dismissed findings, gate evaluations, labels, patterns", """
    create table runs (
        id uuid primary key,
        connection text not null,
        database text not null,
        collection text not null,
        schedule text,
        planner text not null,
        model text,
        started_at timestamptz not null,
        finished_at timestamptz not null,
        duration_s double precision not null,
        outcome text not null check (outcome in ('succeeded', 'partial', 'failed')),
        termination_reason text not null,
        error text,
        iterations integer not null,
        documents_sampled integer not null,
        collection_size bigint not null,
        input_tokens bigint not null default 0,
        output_tokens bigint not null default 0,
        cached_tokens bigint not null default 0,
        cost_usd numeric(14, 6) not null default 0,
        report jsonb not null,
        stored_at timestamptz not null default now()
    );
    create index runs_by_collection on runs (connection, database, collection, started_at desc);
    create index runs_by_start on runs (started_at);

    create table findings (
        run_id uuid not null references runs (id) on delete cascade,
        id uuid not null,
        fingerprint text not null,
        field text not null,
        category text not null,
        severity text not null,
        description text not null,
        hypothesis text not null,
        evidence_query jsonb not null,
        affected_count bigint not null,
        affected_pct double precision not null,
        sample_values jsonb not null,
        confirmed boolean not null,
        diff_status text,
        new_persistent boolean not null default false,
        primary key (run_id, id)
    );
    create index findings_by_fingerprint on findings (fingerprint);

    create table dismissed_findings (
        run_id uuid not null references runs (id) on delete cascade,
        seq integer not null,
        fingerprint text not null,
        field text not null,
        category text not null,
        severity text not null,
        affected_count bigint not null,
        affected_pct double precision not null,
        evidence_query jsonb not null,
        critique text not null,
        finding jsonb not null,
        primary key (run_id, seq)
    );

    create table gate_evaluations (
        run_id uuid not null references runs (id) on delete cascade,
        seq integer not null,
        gate text not null,
        iteration integer not null,
        evaluator text not null,
        verdict text not null,
        rules jsonb not null,
        primary key (run_id, seq)
    );

    -- Labels and patterns outlive the runs they came from: no foreign keys to runs.
    create table labels (
        id bigserial primary key,
        fingerprint text not null,
        run_id uuid not null,
        finding_id uuid not null,
        connection text not null,
        database text not null,
        collection text not null,
        field text not null,
        category text not null,
        verdict text not null check (verdict in ('tp', 'fp')),
        note text,
        affected_pct double precision not null,
        created_at timestamptz not null default now()
    );
    create index labels_by_collection on labels (connection, database, collection);

    create table patterns (
        fingerprint text primary key,
        connection text not null,
        database text not null,
        collection text not null,
        field text not null,
        category text not null,
        runs_seen integer not null,
        first_seen_run uuid not null,
        first_seen_at timestamptz not null,
        last_seen_run uuid not null,
        last_seen_at timestamptz not null,
        persistent_since_run uuid,
        persistent_since_at timestamptz
    );
    """),
    (2, "trigger claims across replicas; schedule and replica of a run", """
    create table schedule_triggers (
        schedule text not null,
        slot timestamptz not null,
        replica text not null,
        run_id uuid not null,
        claimed_at timestamptz not null default now(),
        primary key (schedule, slot)
    );
    alter table runs add column scheduled_for timestamptz;
    alter table runs add column replica text;
    create index runs_by_schedule on runs (schedule, started_at desc);
    """),
    (3, "alert outbox and mutes", """
    -- One row per alert and channel, written in the transaction that stores the run.
    -- No foreign key to runs: an alert outlives the pruning of its run until delivered.
    create table alert_outbox (
        id bigserial primary key,
        dedup_key text not null,
        channel text not null,
        kind text not null,
        run_id uuid not null,
        fingerprint text,
        connection text not null,
        database text not null,
        collection text not null,
        category text,
        alert jsonb not null,
        status text not null default 'pending' check (status in ('pending', 'delivered', 'muted', 'dropped')),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null,
        leased_until timestamptz,
        last_error text,
        created_at timestamptz not null,
        delivered_at timestamptz,
        unique (dedup_key, channel)
    );
    create index alert_outbox_due on alert_outbox (next_attempt_at) where status = 'pending';

    create table mutes (
        id bigserial primary key,
        fingerprint text,
        connection text,
        database text,
        collection text,
        category text,
        reason text,
        created_at timestamptz not null,
        expires_at timestamptz,
        check (fingerprint is not null or collection is not null or category is not null)
    );
    """),
    (4, "what each run cost the audited database", """
    alter table runs add column queries_sent integer not null default 0;
    alter table runs add column passes integer not null default 0;
    alter table runs add column documents_examined bigint not null default 0;
    alter table runs add column throttled integer not null default 0;
    alter table runs add column request_units double precision;
    """),
    (5, "trigger claims carry a lease their owner renews while it runs", """
    -- A claim whose lease ran out and whose run was never stored belongs to a replica that died.
    alter table schedule_triggers add column lease_until timestamptz;
    create index schedule_triggers_by_run on schedule_triggers (run_id);
    """),
    (10, "collection health per run; 'expected' labels for anomalies", """
    -- One row per run that measured its collection (argus.agent.health); pruned with its run.
    create table run_health (
        run_id uuid primary key references runs (id) on delete cascade,
        connection text not null,
        database text not null,
        collection text not null,
        at timestamptz not null,
        documents bigint not null,
        inserts bigint,
        freshness_s double precision,
        snapshot jsonb not null
    );
    create index run_health_by_collection on run_health (connection, database, collection, at desc);
    alter table labels drop constraint labels_verdict_check;
    alter table labels add constraint labels_verdict_check check (verdict in ('tp', 'fp', 'expected'));
    """),
    (11, "incidents: findings grouped per collection, their status, owner and history", """
    -- One row per incident. Incidents outlive the runs they came from: no foreign keys to runs.
    create table incidents (
        id bigserial primary key,
        connection text not null,
        database text not null,
        collection text not null,
        grouping text not null check (grouping in ('collection', 'category', 'pattern')),
        group_key text not null,           -- '' per collection, else the category or the pattern's fingerprint
        status text not null check (status in ('open', 'acknowledged', 'resolved', 'expected', 'false_positive')),
        severity text not null,            -- the highest severity any of its findings had
        notified_severity text not null,   -- the severity its last opening or escalation was sent at
        owner text,
        note text,
        schedule text,
        labels jsonb not null default '{}',  -- the schedule's labels when it opened: routing stays stable
        opened_at timestamptz not null,
        open_since timestamptz not null,   -- when it last became open (opened or reopened)
        opened_run uuid not null,
        last_run uuid not null,
        last_seen_at timestamptz not null,
        updated_at timestamptz not null,
        acknowledged_at timestamptz,
        resolved_at timestamptz,
        clean_runs integer not null default 0,
        reopened integer not null default 0,
        reminders integer not null default 0,
        reminded_at timestamptz,
        refreshes integer not null default 0,
        refreshed_at timestamptz
    );
    create index incidents_by_group on incidents (connection, database, collection, grouping, group_key, id desc);
    create index incidents_by_status on incidents (status, severity);

    create table incident_findings (
        incident_id bigint not null references incidents (id) on delete cascade,
        fingerprint text not null,
        field text not null,
        category text not null,
        severity text not null,
        state text not null check (state in ('active', 'resolved')),
        affected_count bigint not null,
        affected_pct double precision not null,
        notified_pct double precision not null,  -- share when its incident was last sent (or when it joined)
        collection_size bigint not null,
        evidence_query jsonb not null,           -- masked by its run's privacy mode
        evidence_redacted boolean not null,
        first_run uuid not null,
        last_run uuid not null,
        last_finding uuid not null,              -- the finding in last_run, for labels
        first_seen_at timestamptz not null,
        last_seen_at timestamptz not null,
        resolved_at timestamptz,
        primary key (incident_id, fingerprint)
    );
    create index incident_findings_by_fingerprint on incident_findings (fingerprint);

    create table incident_events (
        id bigserial primary key,
        incident_id bigint not null references incidents (id) on delete cascade,
        at timestamptz not null,
        kind text not null,
        status text not null,                    -- the incident's status after the event
        owner text,
        note text,
        run_id uuid,
        source text not null,                    -- run, cli, http or daemon
        detail text not null default '',
        notice text,                             -- the notification this event sends, if any
        notice_queued boolean not null default false  -- in the outbox (or nothing to send): never again
    );
    create index incident_events_by_incident on incident_events (incident_id, id);
    create index incident_events_unqueued on incident_events (id) where notice is not null and not notice_queued;

    -- Incident notices share the outbox; a reminder belongs to no run.
    alter table alert_outbox alter column run_id drop not null;
    alter table alert_outbox add column incident_id bigint;
    """),
    (20, "the window of a scoped audit per run; the last full audit of each collection", """
    -- A scoped run's window key (field:seconds); null for an audit of the whole collection.
    alter table runs add column scope text;
    create index runs_by_scope on runs (connection, database, collection, scope, started_at desc);
    -- Kept apart from runs so pruning old runs does not forget when the last full audit ran.
    create table full_audits (
        connection text not null,
        database text not null,
        collection text not null,
        last_full_at timestamptz not null,
        last_full_run uuid not null,
        primary key (connection, database, collection)
    );
    """),
    (34, "the values of each schedule's own metrics per run (issue 32)", """
    create table metric_values (
        run_id uuid not null references runs (id) on delete cascade,
        schedule text not null,
        metric text not null,
        segment text not null default '',        -- '' for a single value; seg_<digest> or 'other' per group
        grp text,                                -- the group as the run's privacy mode allowed (null in strict)
        at timestamptz not null,                 -- the run's start
        value double precision,                  -- null: no value (none answered, or not measured)
        verdict text not null,
        expected text,
        error text,                              -- why the metric was not measured
        primary key (run_id, metric, segment)
    );
    create index metric_values_by_metric on metric_values (schedule, metric, segment, at desc);
    """),
]


def migrate(conn: Any) -> list[int]:
    """Apply the missing migrations on ``conn`` (a psycopg connection); return the versions applied."""
    applied_now: list[int] = []
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute("create table if not exists schema_migrations (version integer primary key, "
                     "description text not null, applied_at timestamptz not null default now())")
        done = {row[0] for row in conn.execute("select version from schema_migrations")}
        for version, description, sql in MIGRATIONS:
            if version in done:
                continue
            conn.execute(sql)
            conn.execute("insert into schema_migrations (version, description) values (%s, %s)",
                         (version, description))
            applied_now.append(version)
    return applied_now
