-- ResilienceKit PostgreSQL coordination store, schema version 1: the tables and the version sequence.
CREATE TABLE IF NOT EXISTS resilience_coordination_schema (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS resilience_coordination_rate (
    key text PRIMARY KEY,
    tat_us bigint NOT NULL,
    decided_us bigint NOT NULL,
    granted bigint NOT NULL,
    first_offset_us bigint NOT NULL,
    retry_us bigint NOT NULL);
CREATE TABLE IF NOT EXISTS resilience_coordination_breaker (
    key text PRIMARY KEY,
    state text NOT NULL,
    version bigint NOT NULL,
    written_us bigint NOT NULL,
    open_until_us bigint NOT NULL,
    trips integer NOT NULL,
    expires_us bigint NOT NULL,
    probe_holder text,
    probe_until_us bigint NOT NULL);
CREATE SEQUENCE IF NOT EXISTS resilience_coordination_version;
INSERT INTO resilience_coordination_schema (version) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM resilience_coordination_schema);
