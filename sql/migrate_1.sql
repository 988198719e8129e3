-- Migration of a store from schema 1 to schema 2: one word per idea. The tables of the values a
-- study gives, system_level_scores and domain_level_scores, are now given_system_scores_by_id and
-- given_domain_scores_by_id (read through the views given_system_scores and given_domain_scores);
-- views.sql adds item_scores (story_scores stays, as its alias). Run by
-- hanna_stats.store.db.migrate, like migrate_0.sql: a table renamed here to _hs_old_<name> is
-- refilled into the table <name> that schema.sql created.

-- A store of schema 1.
ALTER TABLE IF EXISTS system_level_scores RENAME TO _hs_old_given_system_scores_by_id;
ALTER TABLE IF EXISTS domain_level_scores RENAME TO _hs_old_given_domain_scores_by_id;
-- A store of schema 0, whose tables migrate_0.sql has set aside.
ALTER TABLE IF EXISTS _hs_old_system_level_scores RENAME TO _hs_old_given_system_scores_by_id;
ALTER TABLE IF EXISTS _hs_old_domain_level_scores RENAME TO _hs_old_given_domain_scores_by_id;
