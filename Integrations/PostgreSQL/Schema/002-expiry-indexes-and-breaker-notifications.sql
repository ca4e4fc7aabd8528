-- ResilienceKit PostgreSQL coordination store, schema version 2: indexed expiry for the sweeper, and a
-- notification on every breaker change (the key as payload; empty when the key is too long for one).
CREATE INDEX IF NOT EXISTS resilience_coordination_rate_tat_us ON resilience_coordination_rate (tat_us);
CREATE INDEX IF NOT EXISTS resilience_coordination_breaker_expires_us ON resilience_coordination_breaker (expires_us);
CREATE OR REPLACE FUNCTION resilience_coordination_breaker_changed() RETURNS trigger LANGUAGE plpgsql AS $notify$
BEGIN
    PERFORM pg_notify('resilience_coordination_breaker_changed',
        CASE WHEN octet_length(NEW.key) < 7900 THEN NEW.key ELSE '' END);
    RETURN NULL;
END $notify$;
DROP TRIGGER IF EXISTS resilience_coordination_breaker_changed ON resilience_coordination_breaker;
CREATE TRIGGER resilience_coordination_breaker_changed AFTER INSERT OR UPDATE ON resilience_coordination_breaker
    FOR EACH ROW EXECUTE FUNCTION resilience_coordination_breaker_changed();
UPDATE resilience_coordination_schema SET version = 2 WHERE version < 2;
