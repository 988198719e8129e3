-- Migration of a store from schema 0 (no table store_schema: written by hanna_stats 0.1.0 before
-- stores recorded their schema, or earlier) to schema 1. Run by hanna_stats.store.db.open_store()
-- in one transaction, after schema.sql has created the tables the store lacks and before it runs
-- again to create anew the tables renamed here to _hs_old_<name>, which are then refilled by
-- column name (columns they lacked take their defaults) and dropped.

-- Columns added since the first stores.
ALTER TABLE inputs ADD COLUMN IF NOT EXISTS domain VARCHAR;
ALTER TABLE inputs ADD COLUMN IF NOT EXISTS document VARCHAR;
ALTER TABLE inputs ADD COLUMN IF NOT EXISTS subset VARCHAR;
ALTER TABLE measures ADD COLUMN IF NOT EXISTS judge VARCHAR;
-- Without schema.sql's CHECK, which ADD COLUMN cannot declare; hanna_stats.store checks scales.
ALTER TABLE measures ADD COLUMN IF NOT EXISTS scale VARCHAR;
ALTER TABLE ratings ALTER COLUMN score DROP NOT NULL;
ALTER TABLE ratings ADD COLUMN IF NOT EXISTS answer VARCHAR;
ALTER TABLE study ADD COLUMN IF NOT EXISTS item_word VARCHAR;

-- Every study names its items: HANNA's are stories, any other study's items.
UPDATE study SET item_word = CASE WHEN name = 'HANNA' THEN 'story' ELSE 'item' END
WHERE item_word IS NULL;

-- Each item's reference is its first (and only) one in item_references.
INSERT INTO item_references (item_id, position, name, text)
SELECT item_id, 1, NULL, reference FROM items
WHERE reference IS NOT NULL AND item_id NOT IN (SELECT item_id FROM item_references);

-- The given values are keyed by subset ('' for values given before subsets existed); a primary
-- key cannot be altered, so the tables are rebuilt (migrate_1.sql renames them; a store of schema
-- 0 may lack them).
-- Stores older than 0.1.0 kept scores and ratings under a primary key (whose index stays in
-- memory): they are rebuilt without it.
ALTER TABLE scores RENAME TO _hs_old_scores;
ALTER TABLE ratings RENAME TO _hs_old_ratings;
ALTER TABLE IF EXISTS system_level_scores RENAME TO _hs_old_system_level_scores;
ALTER TABLE IF EXISTS domain_level_scores RENAME TO _hs_old_domain_level_scores;
