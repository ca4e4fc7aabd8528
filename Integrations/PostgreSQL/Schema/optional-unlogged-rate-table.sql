-- ResilienceKit PostgreSQL coordination store, optional: the rate table UNLOGGED.
ALTER TABLE resilience_coordination_rate SET UNLOGGED;
