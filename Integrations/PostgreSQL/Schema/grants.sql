-- ResilienceKit PostgreSQL coordination store: what the application's role needs when it does not own the
-- schema: psql -v app_role=app -f grants.sql. Run-time DDL (createsSchema) needs CREATE instead.
GRANT SELECT ON resilience_coordination_schema TO :"app_role";
GRANT SELECT, INSERT, UPDATE, DELETE ON resilience_coordination_rate, resilience_coordination_breaker TO :"app_role";
GRANT USAGE ON SEQUENCE resilience_coordination_version TO :"app_role";
